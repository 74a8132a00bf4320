"use client";
// Signs out (the server revokes the session) and returns to the login page.
import { useState } from "react";
import { api } from "@/components/api-client";
import { useCsrfToken } from "@/components/providers";

export function SignOutButton() {
  const csrfToken = useCsrfToken();
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className="link-button"
      disabled={busy}
      onClick={async () => {
        setBusy(true);
        await api("/api/auth/logout", { method: "POST", csrfToken }).catch(() => undefined);
        window.location.assign("/login");
      }}
    >
      Sign out
    </button>
  );
}
