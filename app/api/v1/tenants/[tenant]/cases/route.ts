// GET /api/v1/tenants/{tenant}/cases?state=open|closed|all&kind=: cases newest
// first, each with its discrepancy and any proposal waiting for approval.
import { z } from "zod";
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { listCases } from "@/lib/cases/cases";
import { accessError, handled, json, parseInput, queryOf } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string }> };

const blank = (v: unknown) => (v === "" ? undefined : v);
const Query = z.object({
  state: z.preprocess(blank, z.enum(["open", "closed", "all"]).default("open")),
  kind: z.preprocess(blank, z.enum(["OURS_NOT_THEIRS", "MISMATCH"]).optional()),
  before: z.preprocess(blank, bigintId.optional()),
  limit: z.preprocess(blank, z.coerce.number().int().min(1).max(200).default(50)),
});

export const GET = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: SECTION_ROLES.cases });
  if (!access.ok) return accessError(access);
  const q = parseInput(Query, queryOf(request));
  if (!q.ok) return q.response;
  return json(await listCases({ tenantId: access.tenant.id, state: q.value.state, kind: q.value.kind, beforeId: q.value.before, limit: q.value.limit }), { headers: { "cache-control": "no-store" } });
});
