// Single sign-on, end to end: start (remember the sign-in under way, send the browser to
// the provider) and complete (take that sign-in back once, check the provider's answer,
// map the ID token's groups to a role and tenants, provision the person just in time,
// and open the same kind of session a password sign-in opens).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { recordAudit } from "@/lib/admin/audit";
import { safeNextPath } from "@/lib/auth/next-path";
import { provisionSsoUser, type SsoIdentity } from "@/lib/auth/oidc/provision";
import { authorizationRequest, oidcSettings, redeemCallback, type IdTokenClaims } from "@/lib/auth/oidc/provider";
import type { OidcRefusal } from "@/lib/auth/oidc/refusals";
import { grantFor } from "@/lib/auth/oidc/role-map";
import { createSession } from "@/lib/auth/sessions";
import { prisma } from "@/lib/platform/db";
import type { Role } from "@/lib/generated/prisma/enums";

/** How long a person has at the provider (login, consent) before the sign-in is forgotten. */
export const SIGN_IN_TTL_MS = 10 * 60_000;

const SSO_OFF: OidcRefusal = { ok: false, reason: "sso_off", message: "Single sign-on is not configured here." };

const handleId = (handle: string) => createHash("sha256").update(handle).digest("hex");

/** Starts a sign-in: the browser keeps `handle` (in a short-lived cookie) and goes to `url`. */
export async function startOidcSignIn(
  next: unknown,
  now = new Date(),
): Promise<{ ok: true; url: URL; handle: string; maxAgeSeconds: number } | OidcRefusal> {
  const s = oidcSettings();
  if (!s) return SSO_OFF;
  const request = await authorizationRequest(s);
  if (!request.ok) return request;
  const handle = randomBytes(32).toString("base64url");
  // Sign-ins nobody finished are forgotten here rather than by a timer.
  await prisma.oidcSignIn.deleteMany({ where: { expiresAt: { lt: now } } });
  await prisma.oidcSignIn.create({
    data: {
      id: handleId(handle),
      ...request.pending,
      nextPath: safeNextPath(next),
      createdAt: now,
      expiresAt: new Date(now.getTime() + SIGN_IN_TTL_MS),
    },
  });
  return { ok: true, url: request.url, handle, maxAgeSeconds: SIGN_IN_TTL_MS / 1000 };
}

export type OidcSignedIn = {
  ok: true;
  cookieValue: string;
  expiresAt: Date;
  /** Absolute: where the browser goes now (the ?next= it started with, on Tally's configured base URL). */
  redirectTo: URL;
  user: { userId: string; email: string; role: Role; tenants: string[] };
};

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A claim by dotted path ("realm_access.roles"), as a list of strings. */
function groupsIn(claims: IdTokenClaims, path: string): string[] {
  let value: unknown = claims;
  for (const part of path.split(".")) value = (value as Record<string, unknown> | undefined)?.[part];
  if (typeof value === "string") return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/**
 * Completes the sign-in the browser's cookie names. The row is taken (deleted) before
 * anything is checked, so one sign-in cannot be completed twice, even by two callbacks racing.
 */
export async function completeOidcSignIn(input: {
  handle: string | null;
  query: URLSearchParams;
  ip: string;
  now?: Date;
}): Promise<OidcSignedIn | OidcRefusal> {
  const now = input.now ?? new Date();
  const s = oidcSettings();
  if (!s) return SSO_OFF;
  const gone: OidcRefusal = {
    ok: false,
    reason: "no_sign_in_under_way",
    message:
      "This browser has no sign-in under way: it expired (after 10 minutes), was completed already, or was started elsewhere. Start again from the sign-in page.",
  };
  if (!input.handle) return gone;
  const id = handleId(input.handle);
  const pending = await prisma.oidcSignIn.findUnique({ where: { id } });
  if (!pending) return gone;
  const taken = await prisma.oidcSignIn.deleteMany({ where: { id } });
  if (taken.count !== 1 || pending.expiresAt <= now) return gone;

  // Our own check before openid-client's (which makes it too): the answer must carry the
  // state of the sign-in this browser started, or it was started by someone else.
  const providerError = input.query.get("error");
  const state = input.query.get("state");
  if (!providerError && (state === null || !sameText(state, pending.state)))
    return {
      ok: false,
      reason: "state_mismatch",
      message: "This answer from the identity provider belongs to another sign-in (state). Start again.",
    };

  const redeemed = await redeemCallback(s, input.query, pending);
  if (!redeemed.ok) return redeemed;
  const claims = redeemed.claims;

  const groups = groupsIn(claims, s.groupsClaim);
  const granted = grantFor(s.roleMap, groups);
  if (!granted.ok) return granted;

  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  if (!email)
    return {
      ok: false,
      reason: "missing_email",
      message: `The identity provider sent no email for you; Tally needs one (ask for the "email" scope in TALLY_OIDC_SCOPES).`,
    };
  const identity: SsoIdentity = {
    issuer: claims.iss,
    subject: claims.sub,
    email,
    emailVerified: claims.email_verified === true,
    name: typeof claims.name === "string" ? claims.name : null,
    groups,
  };
  const provisioned = await provisionSsoUser(identity, granted.grant, s);
  if (!provisioned.ok) return provisioned;
  const user = provisioned.user;

  const session = await prisma.$transaction(async (tx) => {
    const created = await createSession(tx, user.id, now);
    await recordAudit(tx, {
      actor: { type: "USER", id: user.id, label: user.email },
      action: "user.sign_in",
      subjectType: "user",
      subjectId: user.id,
      details: { session: created.sessionId.slice(0, 12), ip: input.ip, via: "oidc", issuer: claims.iss },
    });
    return created;
  });
  return {
    ok: true,
    cookieValue: session.cookieValue,
    expiresAt: session.expiresAt,
    redirectTo: new URL(pending.nextPath.slice(1), s.baseUrl),
    user: { userId: user.id, email: user.email, role: user.role, tenants: granted.grant.tenants },
  };
}
