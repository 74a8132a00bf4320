// POST /api/v1/tenants/{tenant}/cases/{id}/approvals {proposalId, decision: approve|reject, reason?}:
// a checker's decision on a proposal. The proposer is refused (403), here and
// in the database; an approval that completes the proposal carries it out.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { decideProposal } from "@/lib/cases/cases";
import { json } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";
import { CASE_ACTION, personOf } from "../case-action";

export const dynamic = "force-dynamic";

const Decision = z.object({
  proposalId: z.union([
    bigintId,
    z
      .number()
      .int()
      .positive()
      .transform((n) => BigInt(n)),
  ]),
  decision: z.enum(["approve", "reject"]),
  reason: z.string().trim().max(2000).optional(),
});

export const POST = withTenant({ ...CASE_ACTION, body: Decision }, async ({ tenant, principal, params, body }) => {
  const r = await decideProposal(tenant.id, params.id, body.proposalId, personOf(principal), {
    decision: body.decision,
    reason: body.reason,
  });
  return r.ok ? json(r.value) : r;
});
