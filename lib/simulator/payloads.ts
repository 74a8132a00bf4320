// Provider payloads as the providers send them, and the ways they reformat
// them between retries (field order, null → "", numbers → strings).
import type { Random } from "@/lib/simulator/random";

export type SimMovement = {
  tenant: string;
  provider: "stripe" | "standard";
  kind: "PAYMENT" | "REFUND";
  reference: string;
  /** Stripe: the charge behind a payment intent (what balance transactions name). */
  chargeId?: string;
  /** For refunds: the payment refunded. */
  paymentReference?: string;
  account: string;
  amount: number;
  currency: string;
  /** Unix seconds. */
  created: number;
};

export function stripePaymentIntent(m: SimMovement) {
  return { id: m.reference, object: "payment_intent", amount: m.amount, amount_received: m.amount, currency: m.currency.toLowerCase(), customer: null, metadata: { account: m.account }, created: m.created, latest_charge: m.chargeId, status: "succeeded" };
}

export function stripeCharge(m: SimMovement) {
  return { id: m.chargeId, object: "charge", payment_intent: m.reference, amount: m.amount, amount_captured: m.amount, captured: true, paid: true, currency: m.currency.toLowerCase(), customer: null, metadata: { account: m.account }, created: m.created };
}

export function stripeRefund(m: SimMovement) {
  return { id: m.reference, object: "refund", amount: m.amount, currency: m.currency.toLowerCase(), status: "succeeded", payment_intent: m.paymentReference, charge: null, metadata: {}, created: m.created };
}

/** The event bodies announcing a movement: the second, when present, is the same money under another event type. */
export function eventsFor(m: SimMovement, r: Random, secondType: boolean): object[] {
  if (m.provider === "standard") {
    const data = { id: m.reference, amount: m.amount, currency: m.currency, account: m.kind === "PAYMENT" ? m.account : null, payment_id: m.paymentReference ?? null, created_at: new Date(m.created * 1000).toISOString() };
    return [{ type: m.kind === "PAYMENT" ? "payment.succeeded" : "refund.succeeded", timestamp: new Date(m.created * 1000).toISOString(), data }];
  }
  const envelope = (type: string, object: object) => ({ id: r.id("evt_"), object: "event", api_version: "2024-06-20", type, created: m.created, livemode: false, data: { object } });
  if (m.kind === "REFUND") return [envelope("refund.created", stripeRefund(m))];
  const events = [envelope("payment_intent.succeeded", stripePaymentIntent(m))];
  if (secondType) events.push(envelope("charge.succeeded", stripeCharge(m)));
  return events;
}

/** A retry as a provider that changed its serialiser would send it: same event, different bytes. */
export function reformat(body: object, r: Random): object {
  const style = r.int(0, 2);
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      const entries = Object.entries(v).map(([k, x]) => [k, walk(x)] as const);
      return Object.fromEntries(style === 0 ? entries.reverse() : entries);
    }
    if (style === 1 && v === null) return "";
    if (style === 2 && typeof v === "number") return String(v);
    return v;
  };
  return walk(body) as object;
}

const IGNORED = {
  stripe: ["customer.created", "customer.updated", "invoice.finalized", "payment_intent.created", "charge.pending"],
  standard: ["invoice.created", "customer.updated", "payment.pending"],
};

export function ignoredEvent(provider: "stripe" | "standard", r: Random, created: number): object {
  const type = r.pick(IGNORED[provider]);
  return provider === "stripe"
    ? { id: r.id("evt_"), object: "event", type, created, data: { object: { id: r.id("cus_", 14), object: "customer" } } }
    : { type, timestamp: new Date(created * 1000).toISOString(), data: { id: r.id("inv_", 12) } };
}
