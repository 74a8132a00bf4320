// GET /api/v1/tenants/{tenant}/overview?days=30|90: the overview's figures in one
// read, polled by the dashboard: discrepancy series and verdict, ack p99, today's
// events, outbox, stuck work, open cases and uncleared alerts.
import { z } from "zod";
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { config } from "@/lib/platform/config";
import { accessError, handled, json, parseInput, queryOf } from "@/lib/platform/http";
import { overview } from "@/lib/views/overview";

export const dynamic = "force-dynamic";

const Query = z.object({ days: z.enum(["30", "90"]).default("30").transform((v) => Number(v) as 30 | 90) });

type Params = { params: Promise<{ tenant: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: SECTION_ROLES.overview });
  if (!access.ok) return accessError(access);
  const q = parseInput(Query, queryOf(request));
  if (!q.ok) return q.response;
  return json(await overview(access.tenant.id, { days: q.value.days, staleMs: config().TALLY_STALE_CLAIM_MS }), { headers: { "cache-control": "no-store" } });
});
