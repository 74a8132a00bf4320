// POST /api/auth/logout: revokes the session server-side and clears the cookie.
import { requireAccess } from "@/lib/auth/access";
import { clearedSessionCookie } from "@/lib/auth/cookies";
import { endSession } from "@/lib/auth/sessions";
import { accessError, handled, json, methodNotAllowed } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

export const POST = handled(async (request: Request) => {
  const access = await requireAccess(request, { usersOnly: true });
  if (!access.ok) {
    // An already-ended session still gets its cookie cleared.
    if (access.status === 401)
      return json({ signedOut: true }, { headers: { "set-cookie": clearedSessionCookie(request) } });
    return accessError(access);
  }
  if (access.principal.kind === "user") await endSession(access.principal);
  return json({ signedOut: true }, { headers: { "set-cookie": clearedSessionCookie(request) } });
});

export const GET = methodNotAllowed(["POST"]);
