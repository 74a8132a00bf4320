// GET /api/v1/tenants/{tenant}: the tenant, if the caller may see it.
// PATCH /api/v1/tenants/{tenant}: admins change its retention of raw bodies
// (days, with a reason for the audit log).
import { z } from "zod";
import { RETENTION_DAYS, setRawBodyRetention } from "@/lib/admin/tenants";
import { withTenant } from "@/lib/auth/with-access";
import { json } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

export const GET = withTenant({}, async ({ tenant, principal }) => json({ tenant, role: principal.role }));

const TenantChange = z.object({
  rawBodyRetentionDays: z.number().int().min(RETENTION_DAYS.min).max(RETENTION_DAYS.max),
  reason: z.string().trim().min(1, "say why the retention changes").max(500),
});

export const PATCH = withTenant({ roles: ["admin"], body: TenantChange }, async ({ tenant, actor, body }) => {
  const r = await setRawBodyRetention(tenant.slug, body.rawBodyRetentionDays, actor, body.reason);
  return r.ok ? json(r.value) : r;
});
