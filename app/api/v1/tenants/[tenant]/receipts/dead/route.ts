// GET /api/v1/tenants/{tenant}/receipts/dead?provider=&reference=&from=&to=: receipts
// whose retry schedule ran out, newest first (paginated by ?before=), with the
// number the filter matches: the preview a bulk redelivery confirms against.
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { json } from "@/lib/platform/http";
import { DeadReceiptQuery } from "@/lib/platform/query-params";
import { listDeadReceipts } from "@/lib/pipeline/dead-letters";

export const dynamic = "force-dynamic";

export const GET = withTenant({ roles: SECTION_ROLES.claims, query: DeadReceiptQuery }, async ({ tenant, query }) =>
  json(await listDeadReceipts(tenant.id, query), { headers: { "cache-control": "no-store" } }),
);
