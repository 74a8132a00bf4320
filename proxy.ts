// Runs before every page and API route except webhooks (their ack path stays as
// short as it was; a provider is not a browser): a per-request CSP nonce that
// Next.js puts on its own scripts, and the security headers on the answer
// (lib/platform/security-headers.ts says why each).
import { NextResponse, type NextRequest } from "next/server";
import { cookieSecure } from "@/lib/auth/cookies";
import { config as tallyConfig } from "@/lib/platform/config";
import { contentSecurityPolicy, newNonce, securityHeaders } from "@/lib/platform/security-headers";

export function proxy(request: NextRequest) {
  const nonce = newNonce();
  const development = tallyConfig().NODE_ENV === "development";
  // Next.js finds the nonce for its scripts in the request's policy header.
  const forwarded = new Headers(request.headers);
  forwarded.set("content-security-policy", contentSecurityPolicy({ nonce, development }));
  forwarded.set("x-nonce", nonce);
  const response = NextResponse.next({ request: { headers: forwarded } });
  for (const [name, value] of Object.entries(securityHeaders({ nonce, development, secure: cookieSecure(request) }))) response.headers.set(name, value);
  return response;
}

export const config = {
  matcher: [
    // Not webhooks, and not static build assets (immutable files, no HTML).
    "/((?!api/webhooks/|_next/static/|_next/image|favicon.ico).*)",
  ],
};
