// The one place that decides who is asking and what they may touch: a signed-in
// person (session cookie) or a machine (bearer API token), a tenant they can see,
// and a role allowed to act. Tenants they cannot see answer as if they did not exist.
import type { Actor } from "@/lib/admin/audit";
import { isTenantSlug, quotedSlug, TENANT_SLUG_MAX } from "@/lib/admin/slug";
import { authenticateToken } from "@/lib/auth/api-tokens";
import { readSessionCookie } from "@/lib/auth/cookies";
import { changesState, csrfProblem } from "@/lib/auth/request-origin";
import { resolveSession, type SessionUser } from "@/lib/auth/sessions";
import { prisma } from "@/lib/platform/db";
import type { Role } from "@/lib/generated/prisma/enums";

export type UserPrincipal = { kind: "user" } & SessionUser;
export type TokenPrincipal = { kind: "token"; tokenId: string; prefix: string; role: Role; tenantId: string };
export type Principal = UserPrincipal | TokenPrincipal;

export type VisibleTenant = { id: string; slug: string; name: string };

export type AccessDenied = { ok: false; status: 401 | 403 | 404; code: string; message: string };
export type Access<T extends VisibleTenant | null> = { ok: true; principal: Principal; tenant: T } | AccessDenied;

const deny = (status: AccessDenied["status"], code: string, message: string): AccessDenied => ({
  ok: false,
  status,
  code,
  message,
});

export function actorOf(principal: Principal): Actor {
  return principal.kind === "user"
    ? { type: "USER", id: principal.userId, label: principal.email }
    : { type: "API_TOKEN", id: principal.tokenId, label: `token ${principal.prefix}…` };
}

/** The tenant with this slug if the principal may see it; null otherwise, whether or not it exists. */
export async function visibleTenant(principal: Principal, slug: string): Promise<VisibleTenant | null> {
  if (!isTenantSlug(slug)) return null;
  const tenant = await prisma.tenant.findUnique({ where: { slug }, select: { id: true, slug: true, name: true } });
  if (!tenant) return null;
  if (principal.kind === "token") return tenant.id === principal.tenantId ? tenant : null;
  if (principal.role === "admin") return tenant;
  const member = await prisma.tenantMember.findUnique({
    where: { userId_tenantId: { userId: principal.userId, tenantId: tenant.id } },
  });
  return member ? tenant : null;
}

/** Every tenant the principal may see, by slug. */
export async function visibleTenants(principal: Principal): Promise<VisibleTenant[]> {
  const select = { id: true, slug: true, name: true } as const;
  if (principal.kind === "token") return prisma.tenant.findMany({ where: { id: principal.tenantId }, select });
  if (principal.role === "admin") return prisma.tenant.findMany({ orderBy: { slug: "asc" }, select });
  return prisma.tenant.findMany({
    where: { members: { some: { userId: principal.userId } } },
    orderBy: { slug: "asc" },
    select,
  });
}

type Resolved = { ok: true; principal: Principal } | AccessDenied;

/** Who sent the request. A bearer token wins over a cookie; a bad token is refused, not ignored. */
export async function resolvePrincipal(request: Request): Promise<Resolved> {
  const authorization = request.headers.get("authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) return deny(401, "unauthenticated", "Authorization must be 'Bearer tly_…'");
    const token = await authenticateToken(match[1]!);
    if (!token) return deny(401, "unauthenticated", "Unknown or revoked API token");
    return { ok: true, principal: { kind: "token", ...token } };
  }
  const cookie = readSessionCookie(request.headers.get("cookie"));
  const user = cookie ? await resolveSession(cookie) : null;
  if (!user)
    return deny(
      401,
      "unauthenticated",
      cookie ? "Your session has ended; sign in again" : "Sign in, or send an API token",
    );
  // Tokens need no CSRF check: a browser never attaches them on its own.
  if (changesState(request.method)) {
    const problem = csrfProblem(request, user.csrfToken);
    if (problem) return deny(403, "csrf_failed", problem);
  }
  return { ok: true, principal: { kind: "user", ...user } };
}

export type AccessRule = {
  /** A tenant slug from the URL; 404 unless the principal may see it. */
  tenant?: string;
  /** Roles allowed; any role when omitted. */
  roles?: readonly Role[];
  /** Global actions (tenants, users) belong to people, not tenant-scoped tokens; a string is the refusal's message. */
  usersOnly?: boolean | string;
};

export async function requireAccess(
  request: Request,
  rule: AccessRule & { tenant: string },
): Promise<Access<VisibleTenant>>;
export async function requireAccess(request: Request, rule?: AccessRule): Promise<Access<VisibleTenant | null>>;
export async function requireAccess(request: Request, rule: AccessRule = {}): Promise<Access<VisibleTenant | null>> {
  const resolved = await resolvePrincipal(request);
  if (!resolved.ok) return resolved;
  return authorise(resolved.principal, rule);
}

/** The checks after authentication, shared by route handlers and server components. */
export async function authorise(principal: Principal, rule: AccessRule): Promise<Access<VisibleTenant | null>> {
  let tenant: VisibleTenant | null = null;
  // Tenant before role: a 403 for an invisible tenant would confirm that it exists.
  if (rule.tenant !== undefined) {
    // A path segment that cannot be a slug (a NUL byte, a 10 kB string) is answered before any query.
    if (!isTenantSlug(rule.tenant))
      return deny(
        404,
        "unknown_tenant",
        `Unknown tenant ${quotedSlug(rule.tenant)}: a tenant slug is lower-case letters, digits and dashes, at most ${TENANT_SLUG_MAX} characters`,
      );
    tenant = await visibleTenant(principal, rule.tenant);
    if (!tenant) return deny(404, "unknown_tenant", `Unknown tenant "${rule.tenant}"`);
  }
  if (rule.usersOnly && principal.kind !== "user")
    return deny(
      403,
      "forbidden",
      typeof rule.usersOnly === "string" ? rule.usersOnly : "API tokens cannot do this; sign in as an admin",
    );
  if (rule.roles && !rule.roles.includes(principal.role))
    return deny(403, "forbidden", `Your role (${principal.role}) may not do this; it needs ${rule.roles.join(" or ")}`);
  return { ok: true, principal, tenant };
}
