// POST /api/v1/tenants/{tenant}/cases/{id}/proposals {resolution, reasonCode?, reason}:
// an accountant proposes how to resolve the case (timing, escalate, or a
// correction, computed from the ledger and shown in the answer). A different
// accountant must approve it. People only: four-eyes is about people.
import { z } from "zod";
import { requireAccess } from "@/lib/auth/access";
import { ACTION_ROLES } from "@/lib/auth/roles";
import { CASE_RESOLUTIONS, proposeResolution } from "@/lib/cases";
import type { CaseResolution } from "@/lib/generated/prisma/enums";
import { accessError, domainError, handled, json, jsonBody, parseInput } from "@/lib/http";
import { bigintId } from "@/lib/query-params";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string; id: string }> };

const Proposal = z.object({
  resolution: z.enum(CASE_RESOLUTIONS as [CaseResolution, ...CaseResolution[]]),
  reasonCode: z.string().trim().max(50).optional(),
  reason: z.string().trim().min(3, "Say why, in a few words").max(2000),
});

export const POST = handled(async (request: Request, { params }: Params) => {
  const { tenant, id } = await params;
  const access = await requireAccess(request, { tenant, roles: ACTION_ROLES.decideCases, usersOnly: true });
  if (!access.ok) return accessError(access);
  const caseId = parseInput(bigintId, id);
  if (!caseId.ok) return caseId.response;
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const input = parseInput(Proposal, body.value);
  if (!input.ok) return input.response;
  const p = access.principal;
  if (p.kind !== "user") return accessError({ status: 403, code: "forbidden", message: "Cases are decided by people" });
  const r = await proposeResolution(access.tenant.id, caseId.value, { userId: p.userId, label: p.email }, input.value);
  if (!r.ok) return domainError(r);
  return json(r.value, { status: 201 });
});
