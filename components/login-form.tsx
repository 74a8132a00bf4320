"use client";
// The sign-in form: posts the credentials as JSON and follows ?next= on success.
import { useEffect, useState, type FormEvent } from "react";
import { api } from "@/components/api-client";
import { safeNextPath } from "@/lib/auth/next-path";

export function LoginForm({ next }: { next: string }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Until hydrated, a submit would be a native one that loses what was typed.
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(true), []);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      await api("/api/auth/login", {
        method: "POST",
        body: { email: form.get("email"), password: form.get("password") },
      });
      // Checked again here, where it is followed: ?next= must not send people elsewhere.
      window.location.assign(safeNextPath(next));
    } catch (err) {
      setError(err instanceof Error ? err.message : "Sign-in failed");
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} method="post" className="stack" aria-describedby={error ? "login-error" : undefined}>
      <label>
        Email
        <input name="email" type="email" autoComplete="username" required autoFocus />
      </label>
      <label>
        Password
        <input name="password" type="password" autoComplete="current-password" required />
      </label>
      {error && (
        <p id="login-error" role="alert" className="error">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy || !ready}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
