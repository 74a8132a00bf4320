// Stripe events to money movements.
//
// | event type                                   | movement | reference                      | amount                         |
// |----------------------------------------------|----------|--------------------------------|--------------------------------|
// | payment_intent.succeeded                     | PAYMENT  | payment intent id (pi_…)       | amount_received                |
// | charge.succeeded, charge.captured (captured), no payment_intent | PAYMENT | charge id (ch_…) | amount_captured, else amount |
// | charge.succeeded, charge.captured naming a payment_intent | ignored: the intent's event posts it |  |                |
// | refund.created/updated, charge.refund.updated (status succeeded) | REFUND | refund id (re_…) | amount |
// | charge.refunded (with refunds.data)          | REFUND   | each succeeded refund id       | that refund's amount           |
// | charge.dispute.funds_withdrawn               | DISPUTE  | dispute id (dp_…/du_…)         | the dispute's amount           |
// | charge.dispute.funds_reinstated              | DISPUTE_REVERSAL | dispute id + ":reinstated" | the dispute's amount      |
// | payout.paid                                  | PAYOUT   | payout id (po_…)               | amount; account = destination  |
// | payout.failed                                | PAYOUT_FAILED | payout id + ":failed"     | amount; waits for its payout   |
// | anything else (charge.dispute.created/closed, payout.created…) | ignored: moves no money on our books |    |   |
//
// Fees: Stripe's webhooks do not carry them (a charge names its balance transaction
// by id only); they are posted from the settlement, whose lines carry `fee`
// (lib/recon/settlement-movement.ts). A dispute's own fee is such a line's fee too.
// A dispute is keyed by its id for the withdrawal and id:reinstated for the
// reinstatement, as the settlement report keys its `dispute` and `dispute_reversal`
// lines (./report.ts); a dispute lost moves nothing more (charge.dispute.closed).
//
// The payment intent is the reference because it is what Stripe's balance report
// names (payment_intent_id), so a payment reconciles by the key it posted under.
// Amounts are Stripe's integers converted to ISO 4217 minor units (./amount.ts:
// MGA, ISK and UGX differ).
//
// occurredAt, and why it does not depend on which event arrives first: a payment's
// posting is dated by the payment intent's `created`, and only payment_intent.succeeded
// posts an intent's payment. A charge.succeeded body carries the charge's created and
// only the intent's id; the intent's body carries only the charge's id (latest_charge):
// no timestamp is in both, so if either could post, the ledger's date would be
// whichever was claimed first (days apart when the charge is confirmed later). The
// charge event is therefore ignored when it names an intent; if the intent's event
// never arrives, reconciliation fetches the intent (GET /v1/payment_intents/pi_…) and
// posts it with the same `created`. A charge without an intent (the legacy Charges
// API) has only its own events, dated by the charge's created. A refund is dated by
// the refund object's `created`, which refund.*, charge.refund.updated and
// charge.refunded's list all carry alike (the envelope's `created` only when a body
// omits it, which Stripe's do not).
//
// Account: metadata.account, else customer; a refund naming neither takes the
// account of the payment it refunds. A payment naming neither is credited to
// the tenant's "unallocated" account, visibly, rather than dropped.
import { z } from "zod";
import {
  currencyCode,
  describeZodError,
  looseBoolean,
  minorUnits,
  minorUnitsOrZero,
  optionalText,
  parseJson,
  requiredText,
  timestamp,
} from "@/lib/providers/fields";
import type { Movement, ParseResult } from "@/lib/providers/types";
import { fromStripeMinor } from "@/lib/providers/stripe/amount";

const metadata = z
  .record(z.string(), z.unknown())
  .nullish()
  .transform((m) => m ?? {});
const accountFrom = (meta: Record<string, unknown>, customer: string | undefined) => {
  const fromMeta = meta.account;
  return (
    (typeof fromMeta === "string" && fromMeta !== ""
      ? fromMeta
      : typeof fromMeta === "number"
        ? String(fromMeta)
        : undefined) ??
    customer ??
    null
  );
};

const envelope = z.object({
  id: requiredText,
  type: z.string().min(1),
  created: timestamp,
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

const paymentIntent = z.object({
  id: requiredText,
  amount_received: minorUnits,
  currency: currencyCode,
  customer: optionalText,
  metadata,
  created: timestamp.optional(),
});

const charge = z.object({
  id: requiredText,
  payment_intent: optionalText,
  amount: minorUnits,
  amount_captured: minorUnitsOrZero.optional(),
  captured: looseBoolean.optional(),
  currency: currencyCode,
  customer: optionalText,
  metadata,
  created: timestamp.optional(),
});

const refund = z.object({
  id: requiredText,
  amount: minorUnits,
  currency: currencyCode,
  status: optionalText,
  charge: optionalText,
  payment_intent: optionalText,
  metadata,
  created: timestamp.optional(),
});

const dispute = z.object({
  id: requiredText,
  amount: minorUnits,
  currency: currencyCode,
  charge: optionalText,
  payment_intent: optionalText,
  created: timestamp.optional(),
});

const payout = z.object({
  id: requiredText,
  amount: minorUnits,
  currency: currencyCode,
  destination: optionalText,
  arrival_date: timestamp.optional(),
  status: optionalText,
  created: timestamp.optional(),
});

const refundedCharge = charge.extend({
  refunds: z.object({ data: z.array(refund) }).nullish(),
});

type Envelope = z.infer<typeof envelope>;

function refundMovement(
  r: z.infer<typeof refund>,
  event: Envelope,
  fallback?: { account: string | null; payment?: string },
): Movement {
  return {
    kind: "REFUND",
    reference: r.id,
    account: accountFrom(r.metadata, undefined) ?? fallback?.account ?? null,
    paymentReference: r.payment_intent ?? r.charge ?? fallback?.payment,
    amount: r.amount,
    currency: r.currency,
    occurredAt: r.created ?? event.created,
    description: `Stripe refund ${r.id}`,
  };
}

export function parseStripe(rawBody: Buffer): ParseResult {
  const json = parseJson(rawBody);
  if (!json.ok) return { kind: "failed", error: json.error };
  const env = envelope.safeParse(json.value);
  if (!env.success) return { kind: "failed", error: `not a Stripe event: ${describeZodError(env.error)}` };
  const event = env.data;
  const object = event.data.object;
  const shape = <T extends z.ZodType>(schema: T): z.infer<T> | string => {
    const r = schema.safeParse(object);
    return r.success ? r.data : `${event.type}: ${describeZodError(r.error)}`;
  };
  const money = (stripeAmounts: Movement[]): ParseResult => {
    const movements: Movement[] = [];
    for (const m of stripeAmounts) {
      const iso = fromStripeMinor(m.amount, m.currency);
      if (!iso.ok) return { kind: "failed", error: `${event.type}: ${iso.error}` };
      movements.push({ ...m, amount: iso.value });
    }
    const real = movements.filter((m) => m.amount !== 0n);
    return real.length > 0
      ? { kind: "money", eventType: event.type, movements: real }
      : { kind: "ignored", eventType: event.type, reason: "zero amount" };
  };

  switch (event.type) {
    case "payment_intent.succeeded": {
      const pi = shape(paymentIntent);
      if (typeof pi === "string") return { kind: "failed", error: pi };
      return money([
        {
          kind: "PAYMENT",
          reference: pi.id,
          account: accountFrom(pi.metadata, pi.customer),
          amount: pi.amount_received,
          currency: pi.currency,
          occurredAt: pi.created ?? event.created,
          description: `Stripe payment ${pi.id}`,
        },
      ]);
    }
    case "charge.succeeded":
    case "charge.captured": {
      const ch = shape(charge);
      if (typeof ch === "string") return { kind: "failed", error: ch };
      if (ch.captured === false)
        return { kind: "ignored", eventType: event.type, reason: "authorised, not captured: no money moved yet" };
      if (ch.payment_intent)
        return {
          kind: "ignored",
          eventType: event.type,
          reason: `the payment posts from payment_intent.succeeded for ${ch.payment_intent}, dated by the intent, whichever event arrives first`,
        };
      const reference = ch.id;
      return money([
        {
          kind: "PAYMENT",
          reference,
          account: accountFrom(ch.metadata, ch.customer),
          amount: ch.amount_captured && ch.amount_captured > 0n ? ch.amount_captured : ch.amount,
          currency: ch.currency,
          occurredAt: ch.created ?? event.created,
          description: `Stripe payment ${reference}`,
        },
      ]);
    }
    case "refund.created":
    case "refund.updated":
    case "charge.refund.updated": {
      const r = shape(refund);
      if (typeof r === "string") return { kind: "failed", error: r };
      if (r.status !== "succeeded")
        return {
          kind: "ignored",
          eventType: event.type,
          reason: `refund status is ${r.status ?? "unknown"}, not succeeded`,
        };
      return money([refundMovement(r, event)]);
    }
    case "charge.refunded": {
      const ch = shape(refundedCharge);
      if (typeof ch === "string") return { kind: "failed", error: ch };
      const refunds = ch.refunds?.data.filter((r) => r.status === "succeeded") ?? [];
      if (refunds.length === 0)
        return {
          kind: "ignored",
          eventType: event.type,
          reason: "no succeeded refund listed; refunds post from refund.* events",
        };
      const fallback = { account: accountFrom(ch.metadata, ch.customer), payment: ch.payment_intent ?? ch.id };
      return money(refunds.map((r) => refundMovement(r, event, fallback)));
    }
    case "charge.dispute.funds_withdrawn":
    case "charge.dispute.funds_reinstated": {
      const d = shape(dispute);
      if (typeof d === "string") return { kind: "failed", error: d };
      const reinstated = event.type === "charge.dispute.funds_reinstated";
      return money([
        {
          kind: reinstated ? "DISPUTE_REVERSAL" : "DISPUTE",
          reference: reinstated ? `${d.id}:reinstated` : d.id,
          account: null,
          paymentReference: d.payment_intent ?? d.charge,
          amount: d.amount,
          currency: d.currency,
          // The withdrawal and the reinstatement are two moments of one dispute; each is dated by its event.
          occurredAt: event.created,
          description: `Stripe dispute ${d.id} ${reinstated ? "funds reinstated" : "funds withdrawn"}`,
        },
      ]);
    }
    case "payout.paid":
    case "payout.failed": {
      const p = shape(payout);
      if (typeof p === "string") return { kind: "failed", error: p };
      const failed = event.type === "payout.failed";
      return money([
        {
          kind: failed ? "PAYOUT_FAILED" : "PAYOUT",
          reference: failed ? `${p.id}:failed` : p.id,
          account: p.destination ?? null,
          ...(failed && { paymentReference: p.id }),
          amount: p.amount,
          currency: p.currency,
          occurredAt: p.created ?? event.created,
          ...(p.arrival_date && { arrivalDate: p.arrival_date }),
          description: `Stripe payout ${p.id}${failed ? " failed" : ""}`,
        },
      ]);
    }
    default:
      return { kind: "ignored", eventType: event.type, reason: "event type moves no money" };
  }
}
