// GET /api/v1/tenants/{tenant}/overview?days=30|90: the overview's figures in one
// read, polled by the dashboard: discrepancy series (by provider, kind and cause),
// the days above their control limit, the verdict, ack p99, today's events, outbox,
// stuck work, open cases and uncleared alerts.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { config } from "@/lib/platform/config";
import { json } from "@/lib/platform/http";
import { overview } from "@/lib/views/overview";

export const dynamic = "force-dynamic";

const Query = z.object({
  days: z
    .enum(["30", "90"])
    .default("30")
    .transform((v) => Number(v) as 30 | 90),
});

export const GET = withTenant({ roles: SECTION_ROLES.overview, query: Query }, async ({ tenant, query }) =>
  json(await overview(tenant.id, { days: query.days, staleMs: config().TALLY_STALE_CLAIM_MS }), {
    headers: { "cache-control": "no-store" },
  }),
);
