// POST /api/auth/login {email, password}: a session cookie (and a known-device
// cookie), or why not.
import { z } from "zod";
import { clientAddress } from "@/lib/auth/client-address";
import { crossSiteProblem } from "@/lib/auth/request-origin";
import { cookieSecure, sessionCookie } from "@/lib/auth/cookies";
import { deviceCookie, readDeviceCookie } from "@/lib/auth/devices";
import { signIn } from "@/lib/auth/sign-in";
import { domainError, handled, json, jsonBody, jsonError, methodNotAllowed, parseInput } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

const Credentials = z.object({
  email: z.string().trim().min(1, "Enter your email").max(320),
  password: z.string().min(1, "Enter your password").max(1024),
});

export const POST = handled(async (request: Request) => {
  // Login CSRF: another site must not sign a browser in as someone else.
  const crossSite = crossSiteProblem(request);
  if (crossSite) return jsonError(403, "csrf_failed", crossSite);
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const input = parseInput(Credentials, body.value);
  if (!input.ok) return input.response;
  const result = await signIn({
    ...input.value,
    ip: clientAddress(request),
    device: readDeviceCookie(request.headers.get("cookie")),
  });
  if (!result.ok)
    return domainError(
      result,
      result.reason === "rate_limited" ? { "retry-after": String(result.retryAfterSeconds) } : undefined,
    );
  const maxAge = Math.floor((result.expiresAt.getTime() - Date.now()) / 1000);
  const res = json(
    { user: { email: result.user.email, name: result.user.name, role: result.user.role } },
    { headers: { "set-cookie": sessionCookie(request, result.cookieValue, maxAge), "cache-control": "no-store" } },
  );
  res.headers.append("set-cookie", deviceCookie(result.deviceCookieValue, cookieSecure(request)));
  return res;
});

export const GET = methodNotAllowed(["POST"]);
