// POST /api/v1/tenants/{tenant}/cases/{id}/proposals {resolution, reasonCode?, reason, link?}:
// an accountant proposes how to resolve the case (timing, escalate, a correction,
// computed from the ledger and shown in the answer, or a link: {postingId,
// discrepancyIds}, the settlement lines that together are the case's posting).
// A different accountant must approve it. People only: four-eyes is about people.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { CASE_RESOLUTIONS, proposeResolution } from "@/lib/cases/cases";
import { MAX_LINK_LINES } from "@/lib/cases/link";
import type { CaseResolution } from "@/lib/generated/prisma/enums";
import { json } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";
import { CASE_ACTION, personOf } from "../case-action";

export const dynamic = "force-dynamic";

const Proposal = z
  .object({
    resolution: z.enum(CASE_RESOLUTIONS as [CaseResolution, ...CaseResolution[]]),
    reasonCode: z.string().trim().max(50).optional(),
    reason: z.string().trim().min(3, "Say why, in a few words").max(2000),
    link: z
      .object({
        postingId: bigintId,
        discrepancyIds: z.array(bigintId).min(1, "choose at least one settlement line").max(MAX_LINK_LINES),
      })
      .optional(),
  })
  .refine((p) => p.resolution === "LINK" || p.link === undefined, {
    message: "only a link proposal names records to link",
    path: ["link"],
  })
  .refine((p) => p.resolution !== "LINK" || p.link !== undefined, {
    message: "a link proposal names the posting and the settlement lines",
    path: ["link"],
  });

export const POST = withTenant({ ...CASE_ACTION, body: Proposal }, async ({ tenant, principal, params, body }) => {
  const r = await proposeResolution(tenant.id, params.id, personOf(principal), body);
  return r.ok ? json(r.value, { status: 201 }) : r;
});
