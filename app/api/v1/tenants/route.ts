// GET /api/v1/tenants: the tenants the caller may see. POST: an admin creates one.
import { z } from "zod";
import { visibleTenants } from "@/lib/auth/access";
import { withPrincipal } from "@/lib/auth/with-access";
import { json } from "@/lib/platform/http";
import { createTenant, listTenants } from "@/lib/admin/tenants";

export const dynamic = "force-dynamic";

export const GET = withPrincipal({}, async ({ principal }) => {
  const visible = await visibleTenants(principal);
  return json({ tenants: await listTenants({ ids: visible.map((t) => t.id) }) });
});

const NewTenant = z.object({ slug: z.string().trim().min(1).max(64), name: z.string().trim().min(1).max(200) });

export const POST = withPrincipal({ roles: ["admin"], usersOnly: true, body: NewTenant }, async ({ actor, body }) => {
  const r = await createTenant(body, actor);
  return r.ok ? json({ tenant: r.value }, { status: 201 }) : r;
});
