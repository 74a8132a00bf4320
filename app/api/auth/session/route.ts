// GET /api/auth/session: who is signed in, their CSRF token and visible tenants.
import { visibleTenants } from "@/lib/auth/access";
import { withPrincipal } from "@/lib/auth/with-access";
import { json } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

export const GET = withPrincipal({ usersOnly: true }, async ({ principal: p }) => {
  const tenants = await visibleTenants(p);
  return json(
    {
      user: { email: p.email, name: p.name, role: p.role },
      csrfToken: p.csrfToken,
      tenants: tenants.map((t) => ({ slug: t.slug, name: t.name })),
    },
    { headers: { "cache-control": "no-store" } },
  );
});
