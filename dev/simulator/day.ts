// A realistic day of provider deliveries, deterministic for a seed: payments and
// refunds in a mix of currencies from six providers (lib/providers/*/simulate.ts),
// provider retries (some reformatted), the same payment under two event types,
// events that move no money, tenants whose references collide, a few malformed
// bodies and bad signatures, Adyen's batches of one to five items, and (for the
// simulator) deliveries that never happen. The truth comes with it, so a test can
// say what the ledger must be. With `adversarial`, defects planted on purpose
// (./defects.ts) and what the product must make of each.
import { type Defect, plantDefects } from "@/dev/simulator/defects";
import { adyenBatch, adyenIgnoredItem } from "@/lib/providers/adyen/simulate";
import { scriptFor } from "@/dev/simulator/payloads";
import { seeded, type Random } from "@/lib/providers/simulation/random";
import { isSimProvider, SIM_PROVIDERS, type SimMovement, type SimProvider } from "@/lib/providers/simulation/script";

export type DeliveryNote =
  | "first"
  | "retry"
  | "reformatted"
  | "second-type"
  | "ignored"
  | "malformed"
  | "bad-signature"
  | "adversarial";

export type Delivery = {
  seq: number;
  tenant: string;
  provider: SimProvider;
  /** The exact bytes to send (Adyen: before each item gets its HMAC). Signed at send time, because signatures expire (300 s). */
  body: string;
  signature: "valid" | "invalid";
  /** Standard Webhooks message id: the same for retries of one message. */
  messageId: string;
  note: DeliveryNote;
  /** The movement announced; an Adyen batch names its first here and all of them in `references`. */
  reference: string | null;
  /** Adyen: the reference of every movement in the batch, in item order. */
  references?: string[];
  /** Sent, and acknowledged, before every other delivery of a run (a refund that must arrive before its payment). */
  early?: true;
};

/** How often each provider is drawn, relatively. A list draws each listed provider equally. */
export type ProviderWeights = Partial<Record<SimProvider, number>>;

/** All six, weighted towards Stripe (an Adyen delivery carries three movements on average, so it is drawn less). */
export const DEFAULT_PROVIDER_WEIGHTS: ProviderWeights = {
  stripe: 4,
  standard: 1,
  adyen: 1,
  paystack: 1,
  flutterwave: 1,
  paypal: 2,
};

export type DayOptions = {
  seed: number;
  /** Roughly how many deliveries to produce. */
  events: number;
  tenants: string[];
  providers?: readonly SimProvider[] | ProviderWeights;
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
  /** Plant the defects of ./defects.ts (Stripe's; none when the day has no Stripe). Off unless asked: other tests' days stay as they were. */
  adversarial?: boolean;
};

export type Day = {
  movements: SimMovement[];
  deliveries: Delivery[];
  dropped: SimMovement[];
  /** The planted defects and what each must come to (empty without `adversarial`). */
  defects: Defect[];
  options: Required<DayOptions>;
};

/** The providers to draw from, with their weights; throws on an unknown name or a weight that is not positive. */
export function providerWeights(providers: readonly SimProvider[] | ProviderWeights): [SimProvider, number][] {
  const entries: [string, number][] = Array.isArray(providers)
    ? providers.map((p) => [p, 1])
    : Object.entries(providers as ProviderWeights).map(([p, w]) => [p, w ?? 0]);
  for (const [p, w] of entries) {
    if (!isSimProvider(p)) throw new Error(`unknown provider "${p}" (known: ${SIM_PROVIDERS.join(", ")})`);
    if (!(Number.isFinite(w) && w > 0)) throw new Error(`provider ${p}: weight must be a positive number, got ${w}`);
  }
  if (entries.length === 0) throw new Error("name at least one provider");
  return entries as [SimProvider, number][];
}

/** "stripe,adyen" (drawn equally) or "stripe=4,adyen=1" (weighted), as the CLIs take it; throws naming what is wrong. */
export function providersFromText(text: string): SimProvider[] | ProviderWeights {
  const parts = text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  const weighted = parts.some((p) => p.includes("="));
  const entries = parts.map((p) => {
    const [name, weight] = p.split("=");
    return [name!.trim(), weighted ? Number(weight ?? 1) : 1] as const;
  });
  const result = weighted ? Object.fromEntries(entries) : entries.map(([name]) => name);
  providerWeights(result as SimProvider[] | ProviderWeights);
  return result as SimProvider[] | ProviderWeights;
}

/** Weighted draw; with equal weights it is exactly r.pick, so a list draws as it always did. */
function pickWeighted<T>(r: Random, entries: readonly [T, number][], total: number): T {
  const x = r.next() * total;
  let acc = 0;
  for (const [item, weight] of entries) {
    acc += weight;
    if (x < acc) return item;
  }
  return entries[entries.length - 1]![0];
}

type Announcement = { body: object; reference: string | null; references?: string[] };

export function generateDay(input: DayOptions): Day {
  const o: Required<DayOptions> = {
    providers: DEFAULT_PROVIDER_WEIGHTS,
    dropRate: 0,
    retryRate: 0.2,
    reformatRate: 0.5,
    secondTypeRate: 0.3,
    refundRate: 0.08,
    ignoredRate: 0.05,
    malformedRate: 0.003,
    badSignatureRate: 0.003,
    sharedReferenceRate: 0.01,
    adversarial: false,
    ...input,
  };
  const weights = providerWeights(o.providers);
  const totalWeight = weights.reduce((s, [, w]) => s + w, 0);
  const r = seeded(o.seed);
  const movements: SimMovement[] = [];
  const dropped: SimMovement[] = [];
  const deliveries: Delivery[] = [];
  const counters = new Map<string, number>();
  const count = (key: string) => {
    const n = (counters.get(key) ?? 0) + 1;
    counters.set(key, n);
    return n;
  };
  /** tenant/provider/reference of every movement: a reference names one movement per tenant and provider. */
  const taken = new Set<string>();
  /** Per tenant/provider: delivered payments with something left to refund, in order. */
  const refundable = new Map<string, SimMovement[]>();
  const refunded = new Map<SimMovement, number>();
  /** Per provider: every payment, in order (other tenants' references to share). */
  const paymentsOf = new Map<SimProvider, SimMovement[]>();
  const accounts = Math.max(5, Math.floor(o.events / 40));
  let seq = 0;
  const push = (d: Omit<Delivery, "seq">) => deliveries.push({ ...d, seq: seq++ });
  const created = () => o.dayStart + r.int(0, 86_399);

  /** A new movement, or null when the drawn reference is taken (the next round draws again). */
  const nextMovement = (tenant: string, provider: SimProvider, at: number): SimMovement | null => {
    const script = scriptFor(provider);
    const key = `${tenant}/${provider}`;
    const earlier = refundable.get(key) ?? [];
    if (script.refunds && earlier.length > 0 && r.chance(o.refundRate)) {
      const payment = r.pick(earlier);
      const amount = script.refundAmount(payment, refunded.get(payment) ?? 0, r.pick([1, 0.5, 0.25]));
      const reference = script.refundReference(r, count(`${key}r`), count(`${provider}#r`));
      if (taken.has(`${key}/${reference}`)) return null;
      taken.add(`${key}/${reference}`);
      const total = (refunded.get(payment) ?? 0) + amount;
      refunded.set(payment, total);
      if (script.refundAmount(payment, total, 1) <= 0) earlier.splice(earlier.indexOf(payment), 1);
      return {
        tenant,
        provider,
        kind: "REFUND",
        reference,
        paymentReference: payment.reference,
        account: payment.account,
        amount,
        currency: payment.currency,
        created: Math.max(payment.created + 1, at),
      };
    }
    const [currency, amount] = script.money(r);
    let reference = script.paymentReference(r, count(key));
    // Another tenant's reference: legitimately the same text, a different payment.
    if (r.chance(o.sharedReferenceRate)) {
      const others = (paymentsOf.get(provider) ?? []).filter((x) => x.tenant !== tenant);
      if (others.length > 0) reference = r.pick(others).reference;
    }
    if (taken.has(`${key}/${reference}`)) return null;
    taken.add(`${key}/${reference}`);
    const m: SimMovement = {
      tenant,
      provider,
      kind: "PAYMENT",
      reference,
      ...script.paymentDetails?.(reference, count(`${provider}#p`)),
      account: `acct_${tenant.slice(0, 8)}_${String(r.int(1, accounts)).padStart(4, "0")}`,
      amount,
      currency,
      created: at,
    };
    if (!paymentsOf.has(provider)) paymentsOf.set(provider, []);
    paymentsOf.get(provider)!.push(m);
    return m;
  };

  // Refunds are drawn from payments that were delivered, so none waits on a missing payment.
  const delivered = (m: SimMovement) => {
    if (m.kind !== "PAYMENT") return;
    const key = `${m.tenant}/${m.provider}`;
    if (!refundable.has(key)) refundable.set(key, []);
    refundable.get(key)!.push(m);
  };

  /** Sends each body once (the first perhaps badly signed, then retried), then the provider's retries, some reformatted. */
  const announce = (
    tenant: string,
    provider: SimProvider,
    bodies: Announcement[],
    messageId: string,
    firstNote: "first" | "ignored" = "first",
  ) => {
    const script = scriptFor(provider);
    bodies.forEach(({ body, reference, references }, i) => {
      const refs = references ? { references } : {};
      const badSignature = i === 0 && r.chance(o.badSignatureRate);
      push({
        tenant,
        provider,
        body: JSON.stringify(body),
        signature: badSignature ? "invalid" : "valid",
        messageId: i === 0 ? messageId : r.id("msg_"),
        note: i === 0 ? firstNote : "second-type",
        reference,
        ...refs,
      });
      // A refused delivery is retried by the provider, correctly signed this time.
      if (badSignature)
        push({
          tenant,
          provider,
          body: JSON.stringify(body),
          signature: "valid",
          messageId,
          note: "retry",
          reference,
          ...refs,
        });
      while (r.chance(o.retryRate)) {
        const reformatted = r.chance(o.reformatRate);
        push({
          tenant,
          provider,
          body: JSON.stringify(reformatted ? script.reformat(body, r) : body),
          signature: "valid",
          messageId,
          note: reformatted ? "reformatted" : "retry",
          reference,
          ...refs,
        });
      }
    });
  };

  /** One Adyen POST: one to five items, each a movement of its own or an item that moves no money. */
  const adyenRound = (tenant: string, at: number) => {
    const script = scriptFor("adyen");
    const slots: ({ item: object } | { movement: SimMovement })[] = [];
    const size = r.int(1, 5);
    for (let i = 0; i < size; i++) {
      const itemAt = Math.min(o.dayStart + 86_399, at + i);
      if (r.chance(o.ignoredRate)) slots.push({ item: adyenIgnoredItem(r, itemAt) });
      else {
        const m = nextMovement(tenant, "adyen", itemAt);
        if (m) {
          movements.push(m);
          slots.push({ movement: m });
        }
      }
    }
    const money = slots.flatMap((s) => ("movement" in s ? [s.movement] : []));
    if (slots.length === 0) return;
    // A batch never delivered loses all its items at once.
    if (money.length > 0 && r.chance(o.dropRate)) {
      dropped.push(...money);
      return;
    }
    money.forEach(delivered);
    const messageId = r.id("msg_");
    const later: Announcement[] = [];
    const items = slots.map((s) => {
      if ("item" in s) return s.item;
      const m = s.movement;
      const [item, ...others] = script.events(m, r, script.secondTypeOf === m.kind && r.chance(o.secondTypeRate));
      // A CAPTURE comes later, in a batch of its own.
      for (const other of others) later.push({ body: adyenBatch([other]), reference: m.reference, references: [] });
      return item!;
    });
    announce(
      tenant,
      "adyen",
      [
        { body: adyenBatch(items), reference: money[0]?.reference ?? null, references: money.map((m) => m.reference) },
        ...later,
      ],
      messageId,
      money.length > 0 ? "first" : "ignored",
    );
  };

  while (deliveries.length < o.events) {
    const tenant = r.pick(o.tenants);
    const provider = pickWeighted(r, weights, totalWeight);
    const script = scriptFor(provider);
    const at = created();

    if (r.chance(o.ignoredRate)) {
      push({
        tenant,
        provider,
        body: JSON.stringify(script.ignored(r, at)),
        signature: "valid",
        messageId: r.id("msg_"),
        note: "ignored",
        reference: null,
      });
      continue;
    }
    if (r.chance(o.malformedRate)) {
      push({
        tenant,
        provider,
        body: script.malformed(r, at),
        signature: "valid",
        messageId: r.id("msg_"),
        note: "malformed",
        reference: null,
      });
      continue;
    }
    if (provider === "adyen") {
      adyenRound(tenant, at);
      continue;
    }
    const m = nextMovement(tenant, provider, at);
    if (!m) continue;
    movements.push(m);
    // A dropped movement never reaches Tally at all: only reconciliation can find it.
    if (r.chance(o.dropRate)) {
      dropped.push(m);
      continue;
    }
    delivered(m);
    const messageId = r.id("msg_");
    const events = script.events(m, r, script.secondTypeOf === m.kind && r.chance(o.secondTypeRate));
    announce(
      tenant,
      provider,
      events.map((body) => ({ body, reference: m.reference })),
      messageId,
    );
  }
  const defects =
    o.adversarial && weights.some(([p]) => p === "stripe")
      ? plantDefects(
          {
            r,
            tenants: o.tenants,
            payment: (tenant) => {
              const script = scriptFor("stripe");
              for (;;) {
                const [currency, amount] = script.money(r);
                const reference = script.paymentReference(r, count(`${tenant}/stripe`));
                if (taken.has(`${tenant}/stripe/${reference}`)) continue;
                taken.add(`${tenant}/stripe/${reference}`);
                return {
                  tenant,
                  provider: "stripe",
                  kind: "PAYMENT",
                  reference,
                  ...script.paymentDetails?.(reference, count("stripe#p")),
                  account: `acct_${tenant.slice(0, 8)}_${String(r.int(1, accounts)).padStart(4, "0")}`,
                  amount,
                  currency,
                  created: created(),
                };
              }
            },
            refundReference: (tenant) => {
              for (;;) {
                const reference = scriptFor("stripe").refundReference(
                  r,
                  count(`${tenant}/stripe r`),
                  count("stripe#r"),
                );
                if (!taken.has(`${tenant}/stripe/${reference}`)) {
                  taken.add(`${tenant}/stripe/${reference}`);
                  return reference;
                }
              }
            },
            announce: (tenant, bodies, messageId) => {
              const from = deliveries.length;
              announce(tenant, "stripe", bodies, messageId);
              return Array.from({ length: deliveries.length - from }, (_, i) => from + i);
            },
            pushRaw: (tenant, body, reference) =>
              push({
                tenant,
                provider: "stripe",
                body,
                signature: "valid",
                messageId: r.id("msg_"),
                note: "adversarial",
                reference,
              }),
            early: (indexes) => {
              for (const i of indexes) deliveries[i]!.early = true;
            },
            movement: (m) => movements.push(m),
          },
          o.events,
        )
      : [];
  return { movements, deliveries: r.shuffle(deliveries), dropped, defects, options: o };
}

/**
 * The movements the day's deliveries carry besides its own (PayPal's capture fees),
 * with the tenant and provider of the movement that carries each: posted too.
 */
export function carriedMovements(
  movements: readonly SimMovement[],
): { tenant: string; provider: SimProvider; reference: string; kind: "FEE"; amount: number; currency: string }[] {
  return movements.flatMap((m) =>
    (scriptFor(m.provider).carried?.(m) ?? []).map((c) => ({ ...c, tenant: m.tenant, provider: m.provider })),
  );
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
