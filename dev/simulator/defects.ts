// The adversarial part of a day: defects planted on purpose, each with the outcome
// the product must reach whatever the order of arrival, so the replay can fail a
// product that gets one wrong. All are Stripe's (the provider drawn most, and the
// one whose bodies the planted shapes are real for: charge.succeeded days after
// payment_intent.succeeded is Stripe's own behaviour). Drawn after the ordinary day
// from the same seed, so a day without them is byte for byte the day it always was.
//
// | defect          | what is sent                                                  | expected                                             |
// |-----------------|---------------------------------------------------------------|------------------------------------------------------|
// | changed-retry   | a payment, and a retry of its event with other amount/currency | CONFLICT: one value posted, one claim_conflicts row  |
// | reused-reference| a refund whose id is another payment's reference               | CONFLICT: payment or refund posted, one row          |
// | late-charge     | charge.succeeded dated days after payment_intent.succeeded     | one posting dated by the intent, whatever the order  |
// | refund-first    | a refund sent (and acknowledged) before its payment            | posted after the payment, the same ledger            |
// | bad-money       | amount -n, 0, 2^63, or currency "xyz"                           | FAILED at parse, nothing posted                      |
// | over-refund     | two refunds of one payment, together past its amount           | one posted, the other HELD with a case               |
//
// Which delivery wins a conflicted key's claim depends on arrival order, so the
// truth of a conflict is the SET of its values with exactly one posted; likewise
// which of an over-refund's two (equal) refunds is held. The replay checks those
// properties and keeps such postings out of its byte fingerprint (dev/replay.ts).
import type { Random } from "@/lib/providers/simulation/random";
import type { SimMovement } from "@/lib/providers/simulation/script";
import { stripeCharge, stripePaymentIntent, stripeRefund } from "@/lib/providers/stripe/simulate";

export const DEFECT_KINDS = [
  "changed-retry",
  "reused-reference",
  "late-charge",
  "refund-first",
  "bad-money",
  "over-refund",
] as const;
export type DefectKind = (typeof DEFECT_KINDS)[number];

export type Defect =
  /** One key, several values: exactly one posted, one claim_conflicts row (DIFFERENT_RETRY), every run. */
  | {
      kind: "changed-retry" | "reused-reference";
      tenant: string;
      provider: "stripe";
      reference: string;
      values: SimMovement[];
    }
  /** Refunds of equal amounts that together pass the payment: exactly one posted, the rest HELD (OVER_REFUND). */
  | { kind: "over-refund"; tenant: string; provider: "stripe"; payment: string; refunds: SimMovement[] }
  /** Refused at parse: the raw event FAILED, nothing posted under the reference. */
  | {
      kind: "bad-money";
      tenant: string;
      provider: "stripe";
      reference: string;
      how: "negative" | "zero" | "oversized" | "unknown-currency";
    }
  /** Ordinary movements (in the day's movements) sent in an unkind way: the ledger must not notice. */
  | { kind: "late-charge" | "refund-first"; tenant: string; provider: "stripe"; reference: string };

/** What the planting needs from the generator: its draws, references not taken yet, and its way of sending. */
export type PlantContext = {
  r: Random;
  tenants: string[];
  /** A new Stripe payment with a reference no movement of its tenant has. */
  payment(tenant: string): SimMovement;
  /** A new Stripe refund reference for the tenant. */
  refundReference(tenant: string): string;
  /** Sends the bodies as announce does (first send, then the provider's ordinary retries); returns the deliveries' indexes. */
  announce(tenant: string, bodies: { body: object; reference: string }[], messageId: string): number[];
  /** Sends exact bytes once (for amounts JSON numbers cannot hold). */
  pushRaw(tenant: string, body: string, reference: string): void;
  /** Marks deliveries to be sent, and acknowledged, before all others. */
  early(indexes: number[]): void;
  movement(m: SimMovement): void;
};

/** Per kind, how many rounds per delivery of the day: 1 in 1,000, at least one of each (a round of bad money is four: 9 in 1,000 in all). */
export const DEFECT_RATE = 0.001;

const DAY = 86_400;
const envelope = (r: Random, type: string, created: number, object: object) => ({
  id: r.id("evt_"),
  object: "event",
  api_version: "2024-06-20",
  type,
  created,
  livemode: false,
  data: { object },
});
const paymentEvent = (r: Random, m: SimMovement) =>
  envelope(r, "payment_intent.succeeded", m.created, stripePaymentIntent(m));
const refundEvent = (r: Random, m: SimMovement) => envelope(r, "refund.created", m.created, stripeRefund(m));

function refundOf(
  c: PlantContext,
  payment: SimMovement,
  amount: number,
  reference = c.refundReference(payment.tenant),
) {
  return {
    tenant: payment.tenant,
    provider: "stripe" as const,
    kind: "REFUND" as const,
    reference,
    paymentReference: payment.reference,
    account: payment.account,
    amount,
    currency: payment.currency,
    created: payment.created + 1 + c.r.int(0, 3600),
  };
}

export function plantDefects(c: PlantContext, events: number): Defect[] {
  const { r } = c;
  const defects: Defect[] = [];
  const each = Math.max(1, Math.round(events * DEFECT_RATE));
  const send = (m: SimMovement, body = m.kind === "PAYMENT" ? paymentEvent(r, m) : refundEvent(r, m)) =>
    c.announce(m.tenant, [{ body, reference: m.reference }], r.id("msg_"));
  for (let i = 0; i < each; i++) {
    for (const kind of DEFECT_KINDS) {
      const tenant = r.pick(c.tenants);
      const p = c.payment(tenant);
      switch (kind) {
        case "changed-retry": {
          // The provider's retry of the same event (same evt id, same message id) with other money.
          const body = paymentEvent(r, p);
          const messageId = r.id("msg_");
          c.announce(tenant, [{ body, reference: p.reference }], messageId);
          const changed: SimMovement = r.chance(0.5)
            ? { ...p, amount: p.amount + r.int(1, 500) }
            : { ...p, currency: p.currency === "EUR" ? "USD" : "EUR" };
          const retry = structuredClone(body);
          Object.assign(retry.data.object, stripePaymentIntent(changed));
          c.announce(tenant, [{ body: retry, reference: p.reference }], messageId);
          defects.push({ kind, tenant, provider: "stripe", reference: p.reference, values: [p, changed] });
          break;
        }
        case "reused-reference": {
          const target = c.payment(tenant);
          c.movement(target);
          send(p);
          send(target);
          const refund = refundOf(c, target, Math.max(1, Math.floor(target.amount / 4)), p.reference);
          send(refund);
          defects.push({ kind, tenant, provider: "stripe", reference: p.reference, values: [p, refund] });
          break;
        }
        case "late-charge": {
          c.movement(p);
          const later = p.created + r.int(2, 5) * DAY;
          c.announce(
            tenant,
            [
              { body: paymentEvent(r, p), reference: p.reference },
              {
                body: envelope(r, "charge.succeeded", later, { ...stripeCharge(p), created: later }),
                reference: p.reference,
              },
            ],
            r.id("msg_"),
          );
          defects.push({ kind, tenant, provider: "stripe", reference: p.reference });
          break;
        }
        case "refund-first": {
          c.movement(p);
          const refund = refundOf(c, p, Math.max(1, Math.floor(p.amount / 2)));
          c.movement(refund);
          send(p);
          c.early(send(refund));
          defects.push({ kind, tenant, provider: "stripe", reference: refund.reference });
          break;
        }
        case "bad-money": {
          // Each round all four: a provider bug of each shape, on a payment of its own.
          for (const how of ["negative", "zero", "oversized", "unknown-currency"] as const) {
            const q = how === "negative" ? p : c.payment(tenant);
            const object = { ...stripePaymentIntent(q), amount: 0, amount_received: 0 };
            if (how === "unknown-currency")
              Object.assign(object, { amount: q.amount, amount_received: q.amount, currency: "xyz" });
            if (how === "negative") Object.assign(object, { amount: -q.amount, amount_received: -q.amount });
            let text = JSON.stringify(envelope(r, "payment_intent.succeeded", q.created, object));
            // 2^63: one past the largest bigint PostgreSQL holds, and not a JSON number JavaScript can write exactly.
            if (how === "oversized")
              text = text.replaceAll(/"(amount|amount_received)":0/g, '"$1":9223372036854775808');
            c.pushRaw(tenant, text, q.reference);
            defects.push({ kind, tenant, provider: "stripe", reference: q.reference, how });
          }
          break;
        }
        case "over-refund": {
          c.movement(p);
          // Two equal refunds, each more than half: whichever commits second is held, and the balance is the same.
          const amount = Math.floor(p.amount / 2) + 1;
          const refunds = [refundOf(c, p, amount), refundOf(c, p, amount)];
          send(p);
          for (const refund of refunds) send(refund);
          defects.push({ kind, tenant, provider: "stripe", payment: p.reference, refunds });
          break;
        }
      }
    }
  }
  return defects;
}
