// GET /api/v1/tenants: the tenants the caller may see. POST: an admin creates one.
import { z } from "zod";
import { actorOf, requireAccess, visibleTenants } from "@/lib/auth/access";
import { accessError, domainError, handled, json, jsonBody, parseInput } from "@/lib/platform/http";
import { createTenant, listTenants } from "@/lib/admin/tenants";

export const dynamic = "force-dynamic";

export const GET = handled(async (request: Request) => {
  const access = await requireAccess(request);
  if (!access.ok) return accessError(access);
  const visible = await visibleTenants(access.principal);
  return json({ tenants: await listTenants({ ids: visible.map((t) => t.id) }) });
});

const NewTenant = z.object({ slug: z.string().trim().min(1).max(64), name: z.string().trim().min(1).max(200) });

export const POST = handled(async (request: Request) => {
  const access = await requireAccess(request, { roles: ["admin"], usersOnly: true });
  if (!access.ok) return accessError(access);
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const input = parseInput(NewTenant, body.value);
  if (!input.ok) return input.response;
  const r = await createTenant(input.value, actorOf(access.principal));
  if (!r.ok) return domainError(r);
  return json({ tenant: r.value }, { status: 201 });
});
