// GET /api/auth/oidc/start?next=/path: sends the browser to the identity provider, with a
// short-lived cookie naming this sign-in so the callback can check the answer is for it.
import { oidcCookie } from "@/lib/auth/cookies";
import { refusalPage } from "@/lib/auth/oidc/refusals";
import { startOidcSignIn } from "@/lib/auth/oidc/sign-in";
import { handled, methodNotAllowed, queryOf } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

export const GET = handled(async (request: Request) => {
  const started = await startOidcSignIn(queryOf(request).next);
  if (!started.ok) return refusalPage(started);
  return new Response(null, {
    status: 303,
    headers: {
      location: started.url.href,
      "set-cookie": oidcCookie(request, started.handle, started.maxAgeSeconds),
      "cache-control": "no-store",
    },
  });
});

export const POST = methodNotAllowed(["GET"]);
