// POST /api/v1/tenants/{tenant}/cases/{id}/approvals {proposalId, decision: approve|reject, reason?}:
// a checker's decision on a proposal. The proposer is refused (403), here and
// in the database; an approval that completes the proposal carries it out.
import { z } from "zod";
import { decideProposal } from "@/lib/cases/cases";
import { domainError, handled, json } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";
import { readCaseAction, type CaseParams } from "../case-action";

export const dynamic = "force-dynamic";

const Decision = z.object({
  proposalId: z.union([bigintId, z.number().int().positive().transform((n) => BigInt(n))]),
  decision: z.enum(["approve", "reject"]),
  reason: z.string().trim().max(2000).optional(),
});

export const POST = handled(async (request: Request, context: CaseParams) => {
  const a = await readCaseAction(request, context, Decision);
  if (!a.ok) return a.response;
  const r = await decideProposal(a.tenantId, a.caseId, a.input.proposalId, a.actor, { decision: a.input.decision, reason: a.input.reason });
  if (!r.ok) return domainError(r);
  return json(r.value);
});
