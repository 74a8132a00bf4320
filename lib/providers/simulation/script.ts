// What the day generator needs from each simulated provider: how it names
// payments and refunds, the bodies it sends for them (shaped exactly as Tally's
// parser for it reads them), and how its retries may differ from the first send.
import type { Random } from "@/lib/providers/simulation/random";

export const SIM_PROVIDERS = ["stripe", "standard", "adyen", "paystack", "flutterwave", "paypal"] as const;
export type SimProvider = (typeof SIM_PROVIDERS)[number];

export function isSimProvider(name: string): name is SimProvider {
  return (SIM_PROVIDERS as readonly string[]).includes(name);
}

/** One movement of money the provider settled: the day's truth. */
export type SimMovement = {
  tenant: string;
  provider: SimProvider;
  kind: "PAYMENT" | "REFUND";
  reference: string;
  /** Stripe: the charge behind a payment intent (what balance transactions name). */
  chargeId?: string;
  /** Flutterwave: the numeric transaction id its verify API takes. */
  lookupId?: string;
  /** For refunds: the payment refunded. */
  paymentReference?: string;
  account: string;
  /** Minor units of the currency, exact (providers speaking decimals get them from lib/money's toDecimalText). */
  amount: number;
  currency: string;
  /** Unix seconds. */
  created: number;
};

export interface ProviderScript {
  readonly provider: SimProvider;
  /** Whether the provider sends refunds Tally posts (Flutterwave's parser reads payments only). */
  readonly refunds: boolean;
  /** Currency and amount (minor units) of a new payment. */
  money(r: Random): [string, number];
  /** A new payment's reference; n counts the tenant's payments with this provider, from 1. */
  paymentReference(r: Random, n: number): string;
  /** A new refund's reference; n counts the tenant's refunds, serial the provider's refunds in the whole day. */
  refundReference(r: Random, n: number, serial: number): string;
  /** What else a payment carries (Stripe's charge, Flutterwave's transaction id); serial counts the provider's payments in the day. */
  paymentDetails?(reference: string, serial: number): Partial<SimMovement>;
  /** A refund's amount, from the payment, what was refunded of it already, and a drawn fraction; 0: nothing left to refund. */
  refundAmount(payment: SimMovement, refunded: number, fraction: number): number;
  /** Which movements the provider may announce a second time under another event type. */
  readonly secondTypeOf: "PAYMENT" | "REFUND" | null;
  /**
   * Movements a delivery of `m` carries besides `m` itself, posted with it under their
   * own keys (PayPal's capture: the fee in its seller_receivable_breakdown). The day's
   * truth counts them (dev/simulator/day.ts carriedMovements).
   */
  carried?(m: SimMovement): { reference: string; kind: "FEE"; amount: number; currency: string }[];
  /** The bodies announcing a movement (Adyen: notification items): the first moves the money, a second is another event type. */
  events(m: SimMovement, r: Random, secondType: boolean): object[];
  /** A retry as the provider's serialiser may send it: same event, other bytes. */
  reformat(body: object, r: Random): object;
  /** An event of a type that moves no money. */
  ignored(r: Random, created: number): object;
  /** A body its parser must refuse, yet correctly signed (a provider bug, not an attack). */
  malformed(r: Random, created: number): string;
}

export type Reshape = { reverseKeys?: boolean; nullToEmpty?: boolean; numbersToStrings?: boolean };

/** The same JSON value with keys in reverse order, null as "", or numbers as strings, at every depth. */
export function reshape(body: object, how: Reshape): object {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      const entries = Object.entries(v).map(([k, x]) => [k, walk(x)] as const);
      return Object.fromEntries(how.reverseKeys ? entries.reverse() : entries);
    }
    if (how.nullToEmpty && v === null) return "";
    if (how.numbersToStrings && typeof v === "number") return String(v);
    return v;
  };
  return walk(body) as object;
}

/** Currency, weight, smallest and largest amount (minor units). */
export type CurrencyMix = readonly (readonly [string, number, number, number])[];

/** A currency by weight and an amount in it; most payments are small (the uniform draw is squared). */
export function drawMoney(r: Random, mix: CurrencyMix): [string, number] {
  let roll = r.int(1, 100);
  for (const [currency, weight, min, max] of mix) {
    roll -= weight;
    if (roll <= 0) {
      const u = r.next();
      return [currency, Math.max(min, Math.round(min + (max - min) * u * u))];
    }
  }
  return [mix[0]![0], mix[0]![2]];
}

/** Refunds never exceed what is left of the payment. */
export function cappedRefund(payment: SimMovement, refunded: number, fraction: number): number {
  const left = payment.amount - refunded;
  return left <= 0 ? 0 : Math.max(1, Math.floor(left * fraction));
}

export const isoSeconds = (unix: number) => new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
export const isoMillis = (unix: number) => new Date(unix * 1000).toISOString();

/** n random characters from an alphabet. */
export function chars(r: Random, n: number, alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"): string {
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(r.next() * alphabet.length)];
  return s;
}
