// requireAccess for server components: no session sends the reader to /login,
// an invisible tenant is a 404 page, a section the role may not use says so.
import { cookies } from "next/headers";
import { notFound, redirect } from "next/navigation";
import { authorise, visibleTenants, type UserPrincipal, type VisibleTenant } from "@/lib/auth/access";
import { SESSION_COOKIE } from "@/lib/auth/cookies";
import { NAV, SECTION_ROLES, type Section } from "@/lib/auth/roles";
import { resolveSession } from "@/lib/auth/sessions";

/** The signed-in person, or null. */
export async function currentUser(): Promise<UserPrincipal | null> {
  const value = (await cookies()).get(SESSION_COOKIE)?.value;
  const user = value ? await resolveSession(value) : null;
  return user ? { kind: "user", ...user } : null;
}

export async function requireUser(next = "/"): Promise<UserPrincipal> {
  const user = await currentUser();
  if (!user) redirect(`/login?next=${encodeURIComponent(next)}`);
  return user;
}

export type PageAccess = {
  principal: UserPrincipal;
  tenant: VisibleTenant;
  tenants: VisibleTenant[];
  allowed: boolean;
};

export async function requirePage(tenantSlug: string, section: Section, rest = ""): Promise<PageAccess> {
  const path = `/t/${tenantSlug}${NAV.find((n) => n.section === section)?.path ?? ""}${rest}`;
  const principal = await requireUser(path);
  const access = await authorise(principal, { tenant: tenantSlug, roles: SECTION_ROLES[section] });
  if (!access.ok && access.status === 404) notFound();
  const tenants = await visibleTenants(principal);
  const tenant = tenants.find((t) => t.slug === tenantSlug);
  if (!tenant) notFound();
  return { principal, tenant, tenants, allowed: access.ok };
}
