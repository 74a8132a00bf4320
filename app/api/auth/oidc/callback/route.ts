// GET /api/auth/oidc/callback?code&state (or ?error): where the identity provider sends
// the browser back. Every check failing is a page naming the reason with its own status;
// success is the same session cookie a password sign-in sets.
import { clientAddress } from "@/lib/auth/client-address";
import { clearedOidcCookie, OIDC_COOKIE, readCookie, sessionCookie } from "@/lib/auth/cookies";
import { refusalPage } from "@/lib/auth/oidc/refusals";
import { completeOidcSignIn } from "@/lib/auth/oidc/sign-in";
import { handled, methodNotAllowed } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

export const GET = handled(async (request: Request) => {
  const result = await completeOidcSignIn({
    handle: readCookie(request.headers.get("cookie"), OIDC_COOKIE),
    query: new URL(request.url).searchParams,
    ip: clientAddress(request),
  });
  // The sign-in under way is used up either way; the browser forgets it too.
  if (!result.ok) return refusalPage(result, { "set-cookie": clearedOidcCookie(request) });
  const maxAge = Math.floor((result.expiresAt.getTime() - Date.now()) / 1000);
  const headers = new Headers({ location: result.redirectTo.href, "cache-control": "no-store" });
  headers.append("set-cookie", sessionCookie(request, result.cookieValue, maxAge));
  headers.append("set-cookie", clearedOidcCookie(request));
  return new Response(null, { status: 303, headers });
});

export const POST = methodNotAllowed(["GET"]);
