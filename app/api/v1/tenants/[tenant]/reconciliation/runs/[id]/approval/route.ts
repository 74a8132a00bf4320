// GET /api/v1/tenants/{tenant}/reconciliation/runs/{id}/approval: the settlement
// movements an uploaded report's run holds (counts, totals per kind and currency) and
// their decision. POST {decision: approve|reject, reason}: a second person's decision
// (accountant or admin, signed in; the run's starter is refused, 403); approving posts
// them, once (a second decision is a 409). lib/recon/settlement-approval.ts says why.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { json, jsonError } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";
import { decideSettlementMovements, SETTLEMENT_DECIDERS, settlementApprovalOf } from "@/lib/recon/settlement-approval";

export const dynamic = "force-dynamic";

export const GET = withTenant(
  { roles: SECTION_ROLES.reconciliation, params: { id: bigintId } },
  async ({ tenant, params }) => {
    const a = await settlementApprovalOf(tenant.id, params.id);
    if (!a)
      return jsonError(404, "not_found", `Run ${params.id} in tenant ${tenant.slug} holds no settlement movements`);
    return json(a, { headers: { "cache-control": "no-store" } });
  },
);

const Decision = z.object({
  decision: z.enum(["approve", "reject"]),
  reason: z.string().trim().min(3, "say why, in at least 3 characters").max(2000),
});

export const POST = withTenant(
  {
    roles: SETTLEMENT_DECIDERS,
    usersOnly: "Four eyes are people's: sign in as an accountant or admin; API tokens cannot approve postings",
    params: { id: bigintId },
    body: Decision,
  },
  async ({ tenant, principal, params, body }) => {
    const r = await decideSettlementMovements(
      tenant.id,
      params.id,
      { userId: principal.userId, label: principal.email },
      body,
    );
    return r.ok ? json(r.value) : r;
  },
);
