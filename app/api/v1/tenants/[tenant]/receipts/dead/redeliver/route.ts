// POST /api/v1/tenants/{tenant}/receipts/dead/redeliver: send dead receipts out
// again under their own idempotency keys, either {ids, reason} or
// {filter, expected, reason} where `expected` is the count the preview showed
// (409 preview_changed if the filter now matches another number). Audited.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { ACTION_ROLES } from "@/lib/auth/roles";
import { json } from "@/lib/platform/http";
import { auditReason, bigintId, DeadReceiptFilter } from "@/lib/platform/query-params";
import { MAX_IDS, type RedeliverRequest, redeliverDeadReceipts } from "@/lib/pipeline/dead-letters";

export const dynamic = "force-dynamic";

const reason = auditReason("they are redelivered");
// One object rather than a union, so a wrong body is refused naming the field at fault.
const Redeliver = z
  .object({
    ids: z.array(bigintId).min(1).max(MAX_IDS).optional(),
    filter: DeadReceiptFilter.optional(),
    expected: z.number().int().min(1).optional(),
    reason,
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.ids === undefined) === (b.filter === undefined))
      ctx.addIssue({ code: "custom", path: ["ids"], message: "give either ids or a filter, not both or neither" });
    if (b.filter !== undefined && b.expected === undefined)
      ctx.addIssue({ code: "custom", path: ["expected"], message: "a filter needs the count its preview showed" });
  })
  .transform(
    (b): RedeliverRequest =>
      b.ids ? { ids: b.ids, reason: b.reason } : { filter: b.filter!, expected: b.expected!, reason: b.reason },
  );

export const POST = withTenant({ roles: ACTION_ROLES.redeliver, body: Redeliver }, async ({ tenant, actor, body }) => {
  const r = await redeliverDeadReceipts(tenant.id, body, actor);
  return r.ok ? json(r.value, { status: 202 }) : r;
});
