// POST /api/v1/tenants/{tenant}/events/bulk-reprocess/{id}/cancel {reason}: stop a running job; its
// events no worker has taken yet go back to the state they were in. Audited.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { ACTION_ROLES } from "@/lib/auth/roles";
import { json } from "@/lib/platform/http";
import { auditReason, bigintId } from "@/lib/platform/query-params";
import { cancelBulkReprocess } from "@/lib/pipeline/bulk-reprocess";

export const dynamic = "force-dynamic";

const Cancel = z.object({
  reason: auditReason("it is cancelled"),
});

export const POST = withTenant(
  { roles: ACTION_ROLES.reprocess, params: { id: bigintId }, body: Cancel },
  async ({ tenant, actor, params, body }) => {
    const r = await cancelBulkReprocess(tenant.id, params.id, actor, body.reason);
    return r.ok ? json(r.value) : r;
  },
);
