// Paystack events to money movements. Amounts are already minor units (kobo, pesewas, cents).
//
// | event            | movement | reference          | account                                        |
// |------------------|----------|--------------------|------------------------------------------------|
// | charge.success   | PAYMENT  | data.reference     | data.metadata.account, else customer_code      |
// | refund.processed | REFUND   | data.id (refund id)| data.metadata.account, else the payment's      |
// | anything else    | ignored  |                    |                                                |
//
// A refund's reference is Paystack's refund id, not data.refund_reference: the id is
// Paystack's own key for the refund (GET /refund/:id, and the refund list that
// reconciliation reads), assigned when the refund is created and the same in every
// refund.* event and retry; refund_reference is the processor's reference, null
// until processed and formatted per processor. A refund.processed without an id
// fails loudly rather than falling back to another field: two keys for one refund
// would post it twice. paymentReference = data.transaction_reference, else
// data.transaction.reference: the charge's reference, the key its payment posted under.
//
// occurredAt, and why it does not depend on arrival order: a payment is dated by
// data.paid_at (else created_at), a refund by refunded_at (else processed_at,
// updated_at, created_at). Only charge.success posts a payment and only
// refund.processed a refund (refund.pending and the rest are ignored), and Paystack
// resends an event with the same data, so every delivery that can post a movement
// carries the same timestamps. (A body that lacked paid_at in one retry and had it in
// another would differ; Paystack's do not.)
import { z } from "zod";
import {
  currencyCode,
  describeZodError,
  metadataAccount,
  minorUnits,
  optionalText,
  optionalTimestamp,
  parseJson,
  requiredText,
} from "@/lib/providers/fields";
import type { ParseResult } from "@/lib/providers/types";

const envelope = z.object({
  event: z.string().min(1),
  data: z.record(z.string(), z.unknown()),
});

const charge = z.object({
  reference: requiredText,
  amount: minorUnits,
  currency: currencyCode,
  status: optionalText,
  metadata: z.unknown().optional(),
  customer: z.object({ customer_code: optionalText }).nullish(),
  paid_at: optionalTimestamp,
  paidAt: optionalTimestamp,
  created_at: optionalTimestamp,
  createdAt: optionalTimestamp,
});

const refund = z.object({
  id: requiredText,
  amount: minorUnits,
  currency: currencyCode,
  status: optionalText,
  metadata: z.unknown().optional(),
  transaction_reference: optionalText,
  transaction: z.union([z.object({ reference: optionalText }), z.string(), z.number(), z.null()]).optional(),
  refunded_at: optionalTimestamp,
  processed_at: optionalTimestamp,
  updated_at: optionalTimestamp,
  updatedAt: optionalTimestamp,
  created_at: optionalTimestamp,
  createdAt: optionalTimestamp,
});

export function parsePaystack(rawBody: Buffer): ParseResult {
  const json = parseJson(rawBody);
  if (!json.ok) return { kind: "failed", error: json.error };
  const env = envelope.safeParse(json.value);
  if (!env.success) return { kind: "failed", error: `not a Paystack event: ${describeZodError(env.error)}` };
  const { event, data } = env.data;

  switch (event) {
    case "charge.success": {
      const c = charge.safeParse(data);
      if (!c.success) return { kind: "failed", error: `${event}: ${describeZodError(c.error)}` };
      const ch = c.data;
      if (ch.status !== undefined && ch.status !== "success")
        return { kind: "ignored", eventType: event, reason: `charge status is ${ch.status}, not success` };
      const occurredAt = ch.paid_at ?? ch.paidAt ?? ch.created_at ?? ch.createdAt;
      if (!occurredAt) return { kind: "failed", error: `${event}: data.paid_at: missing, and no created_at` };
      if (ch.amount === 0n) return { kind: "ignored", eventType: event, reason: "zero amount" };
      return {
        kind: "money",
        eventType: event,
        movements: [
          {
            kind: "PAYMENT",
            reference: ch.reference,
            account: metadataAccount(ch.metadata) ?? ch.customer?.customer_code ?? null,
            amount: ch.amount,
            currency: ch.currency,
            occurredAt,
            description: `Paystack payment ${ch.reference}`,
          },
        ],
      };
    }
    case "refund.processed": {
      const r = refund.safeParse(data);
      if (!r.success) return { kind: "failed", error: `${event}: ${describeZodError(r.error)}` };
      const rf = r.data;
      if (rf.status !== undefined && rf.status !== "processed")
        return { kind: "ignored", eventType: event, reason: `refund status is ${rf.status}, not processed` };
      const paymentReference =
        rf.transaction_reference ?? (typeof rf.transaction === "object" ? rf.transaction?.reference : undefined);
      const occurredAt =
        rf.refunded_at ?? rf.processed_at ?? rf.updated_at ?? rf.updatedAt ?? rf.created_at ?? rf.createdAt;
      if (!occurredAt)
        return {
          kind: "failed",
          error: `${event}: no timestamp (refunded_at, processed_at, updated_at or created_at)`,
        };
      if (rf.amount === 0n) return { kind: "ignored", eventType: event, reason: "zero amount" };
      return {
        kind: "money",
        eventType: event,
        movements: [
          {
            kind: "REFUND",
            reference: rf.id,
            account: metadataAccount(rf.metadata) ?? null,
            paymentReference,
            amount: rf.amount,
            currency: rf.currency,
            occurredAt,
            description: `Paystack refund ${rf.id}${paymentReference ? ` of ${paymentReference}` : ""}`,
          },
        ],
      };
    }
    default:
      return { kind: "ignored", eventType: event, reason: "event type moves no money" };
  }
}
