// POST /api/v1/tenants/{tenant}/events/{id}/reprocess {reason}: send a FAILED
// event, or its stuck or FAILED claims, back through the normal worker path.
// Audited with the reason; DONE work is never redone.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { ACTION_ROLES } from "@/lib/auth/roles";
import { config } from "@/lib/platform/config";
import { json } from "@/lib/platform/http";
import { auditReason, bigintId } from "@/lib/platform/query-params";
import { reprocessEvent } from "@/lib/pipeline/reprocess";

export const dynamic = "force-dynamic";

const Reprocess = z.object({
  reason: auditReason("it is reprocessed"),
});

export const POST = withTenant(
  { roles: ACTION_ROLES.reprocess, params: { id: bigintId }, body: Reprocess },
  async ({ tenant, actor, params, body }) => {
    const r = await reprocessEvent(tenant.id, params.id, actor, body.reason, config().TALLY_STALE_CLAIM_MS);
    return r.ok ? json(r.value, { status: 202 }) : r;
  },
);
