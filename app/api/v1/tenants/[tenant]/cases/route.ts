// GET /api/v1/tenants/{tenant}/cases?state=open|closed|all&kind=: cases newest
// first, each with its discrepancy and any proposal waiting for approval.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { listCases } from "@/lib/cases/cases";
import { json } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

const blank = (v: unknown) => (v === "" ? undefined : v);
const Query = z.object({
  state: z.preprocess(blank, z.enum(["open", "closed", "all"]).default("open")),
  kind: z.preprocess(blank, z.enum(["OURS_NOT_THEIRS", "MISMATCH"]).optional()),
  before: z.preprocess(blank, bigintId.optional()),
  limit: z.preprocess(blank, z.coerce.number().int().min(1).max(200).default(50)),
});

export const GET = withTenant({ roles: SECTION_ROLES.cases, query: Query }, async ({ tenant, query }) =>
  json(
    await listCases({
      tenantId: tenant.id,
      state: query.state,
      kind: query.kind,
      beforeId: query.before,
      limit: query.limit,
    }),
    { headers: { "cache-control": "no-store" } },
  ),
);
