// GET /api/v1/tenants/{tenant}/events/bulk-reprocess/preview?status=FAILED|IGNORED&provider=&reference=&from=&to=:
// how many events a bulk reprocessing with this filter would send back now.
import { withTenant } from "@/lib/auth/with-access";
import { ACTION_ROLES } from "@/lib/auth/roles";
import { json } from "@/lib/platform/http";
import { BulkReprocessFilter } from "@/lib/platform/query-params";
import { MAX_BULK, previewBulkReprocess } from "@/lib/pipeline/bulk-reprocess";

export const dynamic = "force-dynamic";

export const GET = withTenant(
  { roles: ACTION_ROLES.reprocess, query: BulkReprocessFilter },
  async ({ tenant, query }) =>
    json(
      { matching: await previewBulkReprocess(tenant.id, query), max: MAX_BULK },
      { headers: { "cache-control": "no-store" } },
    ),
);
