// Paystack events to money movements. Amounts are already minor units (kobo, pesewas, cents).
//
// | event                  | movement(s)   | reference            | amount / account                                  |
// |------------------------|---------------|----------------------|---------------------------------------------------|
// | charge.success         | PAYMENT       | data.reference       | data.amount; metadata.account, else customer_code |
// |                        | FEE, when     | <reference>:fee      | data.fees (paymentReference: the charge)          |
// |                        | data.fees > 0 |                      |                                                   |
// | refund.processed       | REFUND        | data.id (refund id)  | metadata.account, else the payment's              |
// |   (data.dispute set)   | ignored       |                      | the dispute's own refund: posted as its DISPUTE   |
// | charge.dispute.create  | ignored       |                      | nothing has moved yet                             |
// | charge.dispute.remind  | ignored       |                      |                                                   |
// | charge.dispute.resolve | DISPUTE, when | dsp_<data.id>        | data.refund_amount (paymentReference:             |
// |   resolution merchant- | lost          |                      | data.transaction.reference)                       |
// |   or auto-accepted     |               |                      |                                                   |
// |   resolution declined  | ignored       |                      | won: nothing taken                                |
// | anything else          | ignored       |                      |                                                   |
//
// Every field above is covered by the signature: Paystack signs the whole raw body
// (x-paystack-signature, HMAC-SHA512, ./verify.ts), so a fee or a dispute's amount
// cannot be changed in transit without the delivery being refused at the door.
//
// Fees. charge.success carries data.fees, what Paystack keeps of the charge, in the
// charge's minor units (its transaction object, GET /transaction, carries the same
// field). It is posted as a FEE keyed <reference>:fee, the key reconciliation
// compares each settled line's fee under, so a retry, a reformatted copy or the same
// fee posted from the settlement first is one claim: a retry whose fee differs is a
// conflict for a person, never a second fee. A fee that is negative, not an integer,
// or larger than the charge fails the event, naming data.fees. But Paystack's own
// published charge.success sample sends "fees": null (PaystackOSS/doc-code-snippets,
// dist/doc/payments/webhooks/events.js, transaction_successful), while its transaction
// and settlement-transaction lists carry the number: the webhook does not carry every
// fee, so the adapter says feesInWebhooks: false and a fee only the settlement has is
// posted from it as a matter of course (./settlement.ts). Refunds carry no fee in
// either source (the refund object has amount and deducted_amount only): Paystack
// keeps the charge's fee, which stays posted.
//
// Disputes, and why only the resolution moves money. Paystack's support articles
// ("Best practices for managing chargebacks", "First chargeback") say a chargeback is
// answered within its due time by accepting or declining it, an unanswered one is
// accepted for the merchant, and "when you accept a chargeback, you allow for the
// funds to be deducted from your settlement"; the Disputes API resolves one with a
// resolution and a refund_amount (PUT /dispute/:id/resolve). So nothing leaves the
// balance at charge.dispute.create or .remind (status awaiting-merchant-feedback),
// and at charge.dispute.resolve a lost dispute (resolution "merchant-accepted", or
// "auto-accepted" as in Paystack's published resolve sample) takes its refund_amount,
// which may be part of the charge; a declined one (the merchant won) takes nothing.
// A resolution Tally does not know fails the event rather than guess whether money
// moved. Paystack has no reinstatement after a resolution (no event or field gives a
// lost dispute's money back), so there is no DISPUTE_REVERSAL. The key is the
// dispute's id, the same in every event and retry of it, so a resolve delivered twice,
// or before its create, withdraws once. It is prefixed (dsp_) because Paystack's
// dispute, refund and settlement ids are separate counters whose ranges overlap
// (refund 1641 and dispute 624 in its own samples): a bare id could claim the same
// key as a refund and be dropped as its duplicate. A dispute without an id fails.
// Paystack carries out a lost dispute as a refund of its own (its refund objects
// have a dispute field: GET /refund's sample lists refunds of disputes 20 and 45);
// a refund.processed naming a dispute is therefore ignored, so one dispute never
// withdraws twice, once as DISPUTE and again as REFUND.
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
// occurredAt, and why it does not depend on arrival order: a payment (and its fee) is
// dated by data.paid_at (else created_at), a refund by refunded_at (else processed_at,
// updated_at, created_at), a dispute by its resolvedAt (else updated_at). Only
// charge.success posts a payment, only refund.processed a refund and only
// charge.dispute.resolve a dispute, and Paystack resends an event with the same data,
// so every delivery that can post a movement carries the same timestamps. (A body
// that lacked paid_at in one retry and had it in another would differ; Paystack's do not.)
import { z } from "zod";
import {
  currencyCode,
  describeZodError,
  metadataAccount,
  minorUnits,
  minorUnitsOrZero,
  optionalText,
  optionalTimestamp,
  parseJson,
  requiredText,
} from "@/lib/providers/fields";
import type { Movement, ParseResult } from "@/lib/providers/types";

/**
 * data.fees: absent, null or "" when the payload does not say (Paystack's own
 * charge.success sample sends null); else an integer of minor units, never negative.
 */
const fees = z
  .union([z.null(), z.literal(""), z.number(), z.string()])
  .optional()
  .transform((v, ctx) => {
    if (v === null || v === undefined || v === "") return undefined;
    const text = typeof v === "number" ? (Number.isSafeInteger(v) ? String(v) : "") : v.trim();
    if (!/^-?\d+$/.test(text)) {
      ctx.addIssue({ code: "custom", message: `must be an integer number of minor units, got ${JSON.stringify(v)}` });
      return z.NEVER;
    }
    const fee = BigInt(text);
    if (fee < 0n) {
      ctx.addIssue({
        code: "custom",
        message: `cannot be negative, got ${fee} (it is what Paystack keeps of the charge)`,
      });
      return z.NEVER;
    }
    return fee;
  });

const LOST = new Set(["merchant-accepted", "auto-accepted"]);
const WON = new Set(["declined"]);

/** Tally's key for a Paystack dispute: its id, prefixed apart from refund and settlement ids (see the header). */
export const paystackDisputeReference = (id: string | number) => `dsp_${id}`;

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
  fees,
  paid_at: optionalTimestamp,
  paidAt: optionalTimestamp,
  created_at: optionalTimestamp,
  createdAt: optionalTimestamp,
});

const dispute = z.object({
  id: requiredText,
  refund_amount: z.union([z.null(), z.literal(""), minorUnitsOrZero]).optional(),
  currency: z.union([z.null(), z.literal(""), currencyCode]).optional(),
  status: optionalText,
  resolution: optionalText,
  transaction: z
    .object({
      reference: optionalText,
      amount: z.union([z.null(), z.literal(""), minorUnits]).optional(),
      currency: z.union([z.null(), z.literal(""), currencyCode]).optional(),
    })
    .nullish(),
  transaction_reference: optionalText,
  resolvedAt: optionalTimestamp,
  resolved_at: optionalTimestamp,
  updatedAt: optionalTimestamp,
  updated_at: optionalTimestamp,
});

const refund = z.object({
  id: requiredText,
  amount: minorUnits,
  currency: currencyCode,
  status: optionalText,
  metadata: z.unknown().optional(),
  transaction_reference: optionalText,
  transaction: z.union([z.object({ reference: optionalText }), z.string(), z.number(), z.null()]).optional(),
  dispute: z.unknown().optional(),
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
      if (ch.fees !== undefined && ch.fees > ch.amount)
        return {
          kind: "failed",
          error: `${event}: fees: ${ch.fees} is more than the charge's amount ${ch.amount}; a fee is part of what was charged`,
        };
      const movements: Movement[] = [
        {
          kind: "PAYMENT",
          reference: ch.reference,
          account: metadataAccount(ch.metadata) ?? ch.customer?.customer_code ?? null,
          amount: ch.amount,
          currency: ch.currency,
          occurredAt,
          description: `Paystack payment ${ch.reference}`,
        },
      ];
      if (ch.fees)
        movements.push({
          kind: "FEE",
          reference: `${ch.reference}:fee`,
          account: null,
          paymentReference: ch.reference,
          amount: ch.fees,
          currency: ch.currency,
          occurredAt,
          description: `Paystack fee on ${ch.reference}`,
        });
      return { kind: "money", eventType: event, movements };
    }
    case "refund.processed": {
      const r = refund.safeParse(data);
      if (!r.success) return { kind: "failed", error: `${event}: ${describeZodError(r.error)}` };
      const rf = r.data;
      if (rf.status !== undefined && rf.status !== "processed")
        return { kind: "ignored", eventType: event, reason: `refund status is ${rf.status}, not processed` };
      const ofDispute = disputeOf(rf.dispute);
      if (ofDispute)
        return {
          kind: "ignored",
          eventType: event,
          reason: `the refund of dispute ${ofDispute}: posted as ${paystackDisputeReference(ofDispute)} when the dispute resolves, never twice`,
        };
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
    case "charge.dispute.create":
    case "charge.dispute.remind":
      return {
        kind: "ignored",
        eventType: event,
        reason: "a Paystack dispute takes money only when it is resolved against the merchant (charge.dispute.resolve)",
      };
    case "charge.dispute.resolve":
      return disputeResolved(event, data);
    default:
      return { kind: "ignored", eventType: event, reason: "event type moves no money" };
  }
}

/** The dispute a refund object names (an id, or an object with one); undefined for an ordinary refund. */
function disputeOf(value: unknown): string | undefined {
  const id = value && typeof value === "object" ? (value as { id?: unknown }).id : value;
  if (typeof id === "number" && id > 0) return String(id);
  if (typeof id === "string" && id.trim() !== "" && id.trim() !== "0") return id.trim();
  return undefined;
}

function disputeResolved(event: string, data: Record<string, unknown>): ParseResult {
  const r = dispute.safeParse(data);
  if (!r.success) return { kind: "failed", error: `${event}: ${describeZodError(r.error)}` };
  const d = r.data;
  const resolution = d.resolution;
  if (resolution !== undefined && WON.has(resolution))
    return {
      kind: "ignored",
      eventType: event,
      reason: `dispute ${d.id} was ${resolution}: the merchant won and Paystack took nothing`,
    };
  if (resolution === undefined || !LOST.has(resolution))
    return {
      kind: "failed",
      error: `${event}: resolution: ${JSON.stringify(resolution ?? null)} is not one Tally knows (merchant-accepted or auto-accepted: lost; declined: won); not guessing whether money moved`,
    };
  const amount = d.refund_amount || undefined;
  if (d.refund_amount === 0n) return { kind: "ignored", eventType: event, reason: "zero amount" };
  if (amount === undefined)
    return { kind: "failed", error: `${event}: refund_amount: missing on a dispute resolved ${resolution}` };
  const currency = d.currency || d.transaction?.currency || undefined;
  if (!currency) return { kind: "failed", error: `${event}: currency: missing, and no transaction.currency` };
  const charged = d.transaction?.amount || undefined;
  if (charged !== undefined && (d.transaction?.currency || currency) === currency && amount > charged)
    return {
      kind: "failed",
      error: `${event}: refund_amount: ${amount} is more than the disputed charge's amount ${charged}`,
    };
  const occurredAt = d.resolvedAt ?? d.resolved_at ?? d.updatedAt ?? d.updated_at;
  if (!occurredAt) return { kind: "failed", error: `${event}: resolvedAt: missing, and no updated_at` };
  const paymentReference = d.transaction?.reference ?? d.transaction_reference;
  const reference = paystackDisputeReference(d.id);
  return {
    kind: "money",
    eventType: event,
    movements: [
      {
        kind: "DISPUTE",
        reference,
        account: null,
        ...(paymentReference && { paymentReference }),
        amount,
        currency,
        occurredAt,
        description: `Paystack dispute ${d.id}${paymentReference ? ` on ${paymentReference}` : ""} lost (${resolution})`,
      },
    ],
  };
}
