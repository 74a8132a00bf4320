// Runs before route matching, for two reasons:
// - API paths holding a "%" that does not decode (Next.js itself would answer a
//   bare 500 before any handler runs) are refused 400 here;
// - every page and API route except webhooks gets a per-request CSP nonce that
//   Next.js puts on its own scripts, and the security headers on the answer
//   (lib/platform/security-headers.ts says why each).
// A webhook URL without "%" never enters it (the matcher below), so the
// acknowledgement path stays as short as it was; a provider is not a browser.
import { type NextRequest, NextResponse } from "next/server";
import { cookieSecure } from "@/lib/auth/cookies";
import { config as tallyConfig } from "@/lib/platform/config";
import { malformedPathResponse } from "@/lib/platform/malformed-path";
import { contentSecurityPolicy, newNonce, securityHeaders } from "@/lib/platform/security-headers";

export function proxy(request: NextRequest): Response {
  // request.url keeps the path as sent (still percent-encoded).
  const path = new URL(request.url).pathname;
  if (path.startsWith("/api/") && path.includes("%")) {
    const refused = malformedPathResponse(path);
    if (refused) return refused;
  }
  if (path.startsWith("/api/webhooks/")) return NextResponse.next();
  const nonce = newNonce();
  const development = tallyConfig().NODE_ENV === "development";
  // Next.js finds the nonce for its scripts in the request's policy header.
  const forwarded = new Headers(request.headers);
  forwarded.set("content-security-policy", contentSecurityPolicy({ nonce, development }));
  forwarded.set("x-nonce", nonce);
  const response = NextResponse.next({ request: { headers: forwarded } });
  const headers = securityHeaders({ nonce, development, secure: cookieSecure(request) });
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

export const config = {
  matcher: [
    // Not webhooks, and not static build assets (immutable files, no HTML).
    "/((?!api/webhooks/|_next/static/|_next/image|favicon.ico).*)",
    // Webhooks only when the path holds a "%".
    "/api/webhooks/:rest(.*%.*)",
  ],
};
