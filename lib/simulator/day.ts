// A realistic day of provider deliveries, deterministic for a seed: payments and
// refunds in a mix of currencies, provider retries (some reformatted), the same
// payment under two event types, events that move no money, tenants whose
// references collide, a few malformed bodies and bad signatures, and (for the
// simulator) deliveries that never happen. The truth comes with it, so a test
// can say what the ledger must be.
import { eventsFor, ignoredEvent, reformat, type SimMovement } from "@/lib/simulator/payloads";
import { seeded, type Random } from "@/lib/simulator/random";

export type DeliveryNote = "first" | "retry" | "reformatted" | "second-type" | "ignored" | "malformed" | "bad-signature";

export type Delivery = {
  seq: number;
  tenant: string;
  provider: "stripe" | "standard";
  /** The exact bytes to send. Signed at send time, because signatures expire (300 s). */
  body: string;
  signature: "valid" | "invalid";
  /** Standard Webhooks message id: the same for retries of one message. */
  messageId: string;
  note: DeliveryNote;
  reference: string | null;
};

export type DayOptions = {
  seed: number;
  /** Roughly how many deliveries to produce. */
  events: number;
  tenants: string[];
  providers?: ("stripe" | "standard")[];
  /** Unix seconds of the day's start (UTC midnight). */
  dayStart: number;
  dropRate?: number;
  retryRate?: number;
  reformatRate?: number;
  secondTypeRate?: number;
  refundRate?: number;
  ignoredRate?: number;
  malformedRate?: number;
  badSignatureRate?: number;
  sharedReferenceRate?: number;
};

export type Day = { movements: SimMovement[]; deliveries: Delivery[]; dropped: SimMovement[]; options: Required<DayOptions> };

const CURRENCIES: [string, number, number, number][] = [
  // currency, weight, min, max (minor units)
  ["USD", 50, 100, 250_000],
  ["EUR", 25, 100, 200_000],
  ["GBP", 12, 100, 150_000],
  ["JPY", 8, 100, 60_000],
  ["KWD", 5, 1_000, 400_000],
];

function currencyAndAmount(r: Random): [string, number] {
  let roll = r.int(1, 100);
  for (const [currency, weight, min, max] of CURRENCIES) {
    if ((roll -= weight) <= 0) {
      // Most payments are small: square the uniform draw to skew towards min.
      const u = r.next();
      return [currency, Math.max(min, Math.round(min + (max - min) * u * u))];
    }
  }
  return ["USD", 1000];
}

export function generateDay(input: DayOptions): Day {
  const o: Required<DayOptions> = {
    providers: ["stripe", "standard"],
    dropRate: 0,
    retryRate: 0.2,
    reformatRate: 0.5,
    secondTypeRate: 0.3,
    refundRate: 0.08,
    ignoredRate: 0.05,
    malformedRate: 0.003,
    badSignatureRate: 0.003,
    sharedReferenceRate: 0.01,
    ...input,
  };
  const r = seeded(o.seed);
  const movements: SimMovement[] = [];
  const dropped: SimMovement[] = [];
  const deliveries: Delivery[] = [];
  const counters = new Map<string, number>();
  const paid = new Map<string, SimMovement[]>();
  let seq = 0;
  const push = (d: Omit<Delivery, "seq">) => deliveries.push({ ...d, seq: seq++ });
  const created = () => o.dayStart + r.int(0, 86_399);

  while (deliveries.length < o.events) {
    const tenant = r.pick(o.tenants);
    const provider = r.pick(o.providers);
    const key = `${tenant}/${provider}`;
    const at = created();

    if (r.chance(o.ignoredRate)) {
      push({ tenant, provider, body: JSON.stringify(ignoredEvent(provider, r, at)), signature: "valid", messageId: r.id("msg_"), note: "ignored", reference: null });
      continue;
    }
    if (r.chance(o.malformedRate)) {
      const broken = r.pick(['{"type":"payment_intent.succeeded","data":{"object":{"id":"pi_', "not json at all", '{"type":"payment.succeeded","data":{"id":"x","amount":"12.5","currency":"EUR","created_at":"2026-01-01T00:00:00Z"}}']);
      push({ tenant, provider, body: broken, signature: "valid", messageId: r.id("msg_"), note: "malformed", reference: null });
      continue;
    }

    const earlier = paid.get(key) ?? [];
    let m: SimMovement;
    if (earlier.length > 0 && r.chance(o.refundRate)) {
      const payment = r.pick(earlier);
      const amount = Math.max(1, Math.floor(payment.amount * r.pick([1, 0.5, 0.25])));
      m = { tenant, provider, kind: "REFUND", reference: provider === "stripe" ? r.id("re_") : `ref_${String(counters.set(key + "r", (counters.get(key + "r") ?? 0) + 1).get(key + "r")).padStart(6, "0")}`, paymentReference: payment.reference, account: payment.account, amount, currency: payment.currency, created: Math.max(payment.created + 1, at) };
    } else {
      const [currency, amount] = currencyAndAmount(r);
      const n = (counters.get(key) ?? 0) + 1;
      counters.set(key, n);
      let reference = provider === "stripe" ? r.id("pi_") : `pay_${String(n).padStart(6, "0")}`;
      // Another tenant's reference: legitimately the same text, a different payment.
      if (r.chance(o.sharedReferenceRate)) {
        const others = movements.filter((x) => x.provider === provider && x.tenant !== tenant && x.kind === "PAYMENT");
        if (others.length > 0) reference = r.pick(others).reference;
      }
      if (movements.some((x) => x.tenant === tenant && x.provider === provider && x.reference === reference)) continue;
      m = { tenant, provider, kind: "PAYMENT", reference, chargeId: provider === "stripe" ? `ch_${reference.slice(3)}` : undefined, account: `acct_${tenant.slice(0, 8)}_${String(r.int(1, Math.max(5, Math.floor(o.events / 40)))).padStart(4, "0")}`, amount, currency, created: at };
    }
    movements.push(m);
    // A dropped movement never reaches Tally at all: only reconciliation can find it.
    if (r.chance(o.dropRate)) {
      dropped.push(m);
      continue;
    }
    // Refunds are drawn from payments that were delivered, so none waits on a missing payment.
    if (m.kind === "PAYMENT") paid.set(key, [...earlier, m]);
    const messageId = r.id("msg_");
    const events = eventsFor(m, r, m.kind === "PAYMENT" && r.chance(o.secondTypeRate));
    events.forEach((event, i) => {
      const badSignature = i === 0 && r.chance(o.badSignatureRate);
      push({ tenant, provider, body: JSON.stringify(event), signature: badSignature ? "invalid" : "valid", messageId: i === 0 ? messageId : r.id("msg_"), note: i === 0 ? "first" : "second-type", reference: m.reference });
      // A refused delivery is retried by the provider, correctly signed this time.
      if (badSignature) push({ tenant, provider, body: JSON.stringify(event), signature: "valid", messageId, note: "retry", reference: m.reference });
      while (r.chance(o.retryRate)) {
        const reformatted = r.chance(o.reformatRate);
        push({ tenant, provider, body: JSON.stringify(reformatted ? reformat(event, r) : event), signature: "valid", messageId, note: reformatted ? "reformatted" : "retry", reference: m.reference });
      }
    });
  }
  return { movements, deliveries: r.shuffle(deliveries), dropped, options: o };
}

/** What the ledger must hold per tenant, account and currency once every movement is posted (credit-normal: payments negative). */
export function expectedBalances(movements: SimMovement[]): Map<string, bigint> {
  const balances = new Map<string, bigint>();
  for (const m of movements) {
    const key = `${m.tenant}|customer:${m.account}|${m.currency}`;
    balances.set(key, (balances.get(key) ?? 0n) + (m.kind === "PAYMENT" ? -BigInt(m.amount) : BigInt(m.amount)));
  }
  return balances;
}
