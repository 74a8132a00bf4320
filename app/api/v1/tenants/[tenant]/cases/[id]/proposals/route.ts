// POST /api/v1/tenants/{tenant}/cases/{id}/proposals {resolution, reasonCode?, reason}:
// an accountant proposes how to resolve the case (timing, escalate, or a
// correction, computed from the ledger and shown in the answer). A different
// accountant must approve it. People only: four-eyes is about people.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { CASE_RESOLUTIONS, proposeResolution } from "@/lib/cases/cases";
import type { CaseResolution } from "@/lib/generated/prisma/enums";
import { json } from "@/lib/platform/http";
import { CASE_ACTION, personOf } from "../case-action";

export const dynamic = "force-dynamic";

const Proposal = z.object({
  resolution: z.enum(CASE_RESOLUTIONS as [CaseResolution, ...CaseResolution[]]),
  reasonCode: z.string().trim().max(50).optional(),
  reason: z.string().trim().min(3, "Say why, in a few words").max(2000),
});

export const POST = withTenant({ ...CASE_ACTION, body: Proposal }, async ({ tenant, principal, params, body }) => {
  const r = await proposeResolution(tenant.id, params.id, personOf(principal), body);
  return r.ok ? json(r.value, { status: 201 }) : r;
});
