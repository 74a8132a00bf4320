// GET /api/v1/tenants/{tenant}/events/bulk-reprocess: recent bulk reprocessing jobs with their progress.
// POST {filter, expected, reason}: send back every event the filter matches, if it still matches
// `expected` (the preview's count; 409 preview_changed otherwise). Audited; the claim protocol still
// posts each payment once.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { ACTION_ROLES } from "@/lib/auth/roles";
import { json } from "@/lib/platform/http";
import { auditReason, BulkReprocessFilter } from "@/lib/platform/query-params";
import { bulkJobs, startBulkReprocess } from "@/lib/pipeline/bulk-reprocess";

export const dynamic = "force-dynamic";

const Start = z
  .object({
    filter: BulkReprocessFilter,
    expected: z.number().int().min(1, "preview first: nothing to reprocess"),
    reason: auditReason("they are reprocessed"),
  })
  .strict();

export const GET = withTenant({ roles: ACTION_ROLES.reprocess }, async ({ tenant }) =>
  json({ jobs: await bulkJobs(tenant.id) }, { headers: { "cache-control": "no-store" } }),
);

export const POST = withTenant({ roles: ACTION_ROLES.reprocess, body: Start }, async ({ tenant, actor, body }) => {
  const r = await startBulkReprocess(tenant.id, body, actor);
  return r.ok ? json(r.value, { status: 202 }) : r;
});
