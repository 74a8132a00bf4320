// Stripe as the day generator plays it: payment_intent.succeeded (and sometimes
// charge.succeeded for the same payment), refund.created naming the payment intent.
// The draws here are the ones the generator always made: a seed gives the same day.
import type { Random } from "@/lib/providers/simulation/random";
import {
  cappedRefund,
  drawMoney,
  reshape,
  type CurrencyMix,
  type ProviderScript,
  type SimMovement,
} from "@/lib/providers/simulation/script";

/** Stripe's currencies, and the Standard Webhooks sender's too: one table so a seed gives both the same day as before. */
export const LEGACY_MIX: CurrencyMix = [
  ["USD", 50, 100, 250_000],
  ["EUR", 25, 100, 200_000],
  ["GBP", 12, 100, 150_000],
  ["JPY", 8, 100, 60_000],
  ["KWD", 5, 1_000, 400_000],
];

export function stripePaymentIntent(m: SimMovement) {
  return {
    id: m.reference,
    object: "payment_intent",
    amount: m.amount,
    amount_received: m.amount,
    currency: m.currency.toLowerCase(),
    customer: null,
    metadata: { account: m.account },
    created: m.created,
    latest_charge: m.chargeId,
    status: "succeeded",
  };
}

export function stripeCharge(m: SimMovement) {
  return {
    id: m.chargeId,
    object: "charge",
    payment_intent: m.reference,
    amount: m.amount,
    amount_captured: m.amount,
    captured: true,
    paid: true,
    currency: m.currency.toLowerCase(),
    customer: null,
    metadata: { account: m.account },
    created: m.created,
  };
}

export function stripeRefund(m: SimMovement) {
  return {
    id: m.reference,
    object: "refund",
    amount: m.amount,
    currency: m.currency.toLowerCase(),
    status: "succeeded",
    payment_intent: m.paymentReference,
    charge: null,
    metadata: {},
    created: m.created,
  };
}

/** The retry styles both Stripe and Standard Webhooks senders have shown: key order, null as "", numbers as strings. */
export function legacyReformat(body: object, r: Random): object {
  const style = r.int(0, 2);
  return reshape(body, { reverseKeys: style === 0, nullToEmpty: style === 1, numbersToStrings: style === 2 });
}

/** Bodies no parser accepts; the third reads like a Standard Webhooks payment with a fractional amount. */
export function legacyMalformed(r: Random): string {
  return r.pick([
    '{"type":"payment_intent.succeeded","data":{"object":{"id":"pi_',
    "not json at all",
    '{"type":"payment.succeeded","data":{"id":"x","amount":"12.5","currency":"EUR","created_at":"2026-01-01T00:00:00Z"}}',
  ]);
}

const IGNORED = [
  "customer.created",
  "customer.updated",
  "invoice.finalized",
  "payment_intent.created",
  "charge.pending",
];

export const stripeScript: ProviderScript = {
  provider: "stripe",
  refunds: true,
  money: (r) => drawMoney(r, LEGACY_MIX),
  paymentReference: (r) => r.id("pi_"),
  refundReference: (r) => r.id("re_"),
  paymentDetails: (reference) => ({ chargeId: `ch_${reference.slice(3)}` }),
  refundAmount: cappedRefund,
  secondTypeOf: "PAYMENT",
  events(m, r, secondType) {
    const envelope = (type: string, object: object) => ({
      id: r.id("evt_"),
      object: "event",
      api_version: "2024-06-20",
      type,
      created: m.created,
      livemode: false,
      data: { object },
    });
    if (m.kind === "REFUND") return [envelope("refund.created", stripeRefund(m))];
    const events = [envelope("payment_intent.succeeded", stripePaymentIntent(m))];
    if (secondType) events.push(envelope("charge.succeeded", stripeCharge(m)));
    return events;
  },
  reformat: legacyReformat,
  ignored(r, created) {
    const type = r.pick(IGNORED);
    return {
      id: r.id("evt_"),
      object: "event",
      type,
      created,
      data: { object: { id: r.id("cus_", 14), object: "customer" } },
    };
  },
  malformed: legacyMalformed,
};
