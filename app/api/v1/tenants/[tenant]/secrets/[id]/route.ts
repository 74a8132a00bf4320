// DELETE /api/v1/tenants/{tenant}/secrets/{id} {reason}: revoke a signing secret now.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { json } from "@/lib/platform/http";
import { revokeSecret } from "@/lib/admin/tenants";

export const dynamic = "force-dynamic";

const Revocation = z.object({ reason: z.string().trim().min(1, "Say why the secret is revoked").max(500) });

// The id is checked by revokeSecret (an unknown or another tenant's secret is 404 not_found).
export const DELETE = withTenant(
  { roles: ["admin"], params: { id: z.string() }, body: Revocation },
  async ({ tenant, actor, params, body }) => {
    const r = await revokeSecret(params.id, body.reason, actor, { tenantId: tenant.id });
    return r.ok ? json({ revoked: params.id }) : r;
  },
);
