// GET /api/auth/session: who is signed in, their CSRF token and visible tenants.
import { requireAccess, visibleTenants } from "@/lib/auth/access";
import { accessError, handled, json } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

export const GET = handled(async (request: Request) => {
  const access = await requireAccess(request, { usersOnly: true });
  if (!access.ok) return accessError(access);
  const p = access.principal;
  if (p.kind !== "user") return accessError({ status: 403, code: "forbidden", message: "Sessions belong to people" });
  const tenants = await visibleTenants(p);
  return json({ user: { email: p.email, name: p.name, role: p.role }, csrfToken: p.csrfToken, tenants: tenants.map((t) => ({ slug: t.slug, name: t.name })) }, { headers: { "cache-control": "no-store" } });
});
