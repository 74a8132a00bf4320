// POST /api/v1/tenants/{tenant}/cases/{id}/approvals {proposalId, decision: approve|reject, reason?}:
// a checker's decision on a proposal. The proposer is refused (403), here and
// in the database; an approval that completes the proposal carries it out.
import { z } from "zod";
import { requireAccess } from "@/lib/auth/access";
import { ACTION_ROLES } from "@/lib/auth/roles";
import { decideProposal } from "@/lib/cases";
import { accessError, domainError, handled, json, jsonBody, parseInput } from "@/lib/http";
import { bigintId } from "@/lib/query-params";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string; id: string }> };

const Decision = z.object({
  proposalId: z.union([bigintId, z.number().int().positive().transform((n) => BigInt(n))]),
  decision: z.enum(["approve", "reject"]),
  reason: z.string().trim().max(2000).optional(),
});

export const POST = handled(async (request: Request, { params }: Params) => {
  const { tenant, id } = await params;
  const access = await requireAccess(request, { tenant, roles: ACTION_ROLES.decideCases, usersOnly: true });
  if (!access.ok) return accessError(access);
  const caseId = parseInput(bigintId, id);
  if (!caseId.ok) return caseId.response;
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const input = parseInput(Decision, body.value);
  if (!input.ok) return input.response;
  const p = access.principal;
  if (p.kind !== "user") return accessError({ status: 403, code: "forbidden", message: "Cases are decided by people" });
  const r = await decideProposal(access.tenant.id, caseId.value, input.value.proposalId, { userId: p.userId, label: p.email }, { decision: input.value.decision, reason: input.value.reason });
  if (!r.ok) return domainError(r);
  return json(r.value);
});
