// GET /api/v1/tenants/{tenant}/bank/statements/{id}/lines?filter=all|credits|unmatched|matched&after=&limit=:
// a statement's lines in file order, each with the payouts it settled and the rule,
// or why it is unmatched (match_note) and the case it became.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { LINE_FILTERS, statementLines } from "@/lib/bank/statements";
import { json, jsonError } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

const blank = (v: unknown) => (v === "" ? undefined : v);
const Query = z.object({
  filter: z.preprocess(blank, z.enum(LINE_FILTERS).default("all")),
  after: z.preprocess(blank, z.coerce.number().int().min(0).max(2_147_483_647).optional()),
  limit: z.preprocess(blank, z.coerce.number().int().min(1).max(1000).default(200)),
});

export const GET = withTenant(
  { roles: SECTION_ROLES.bank, params: { id: bigintId }, query: Query },
  async ({ tenant, params, query }) => {
    const page = await statementLines(tenant.id, params.id, {
      filter: query.filter,
      afterRow: query.after,
      limit: query.limit,
    });
    if (!page) return jsonError(404, "not_found", `No bank statement ${params.id} in tenant ${tenant.slug}`);
    return json(page, { headers: { "cache-control": "no-store" } });
  },
);
