// Stripe's settlement side: balance transactions (the ledger Stripe pays out
// from) for a window, and single objects for events that never arrived.
// The endpoint's settings name the API key (apiKey) and, for the simulator or a
// proxy, the base URL (apiBaseUrl, default https://api.stripe.com).
import { apiBaseOrThrow } from "@/lib/providers/api-base";
import { fromStripeMinor } from "@/lib/providers/stripe/amount";
import { stripeCategory } from "@/lib/providers/stripe/categories";
import type {
  EndpointContext,
  FetchedEvent,
  ProviderApi,
  SettlementLine,
  SettlementSource,
  Window,
} from "@/lib/providers/types";

type BalanceTransaction = {
  id: string;
  /** In the settlement (balance) currency, which may differ from the charge's. */
  amount: number;
  /** What Stripe kept, in the balance currency, Stripe's minor units. */
  fee?: number;
  currency: string;
  created: number;
  reporting_category: string;
  /** Expanded: the charge or refund, carrying the amount and currency the customer paid in. */
  source:
    | string
    | {
        id: string;
        object: string;
        payment_intent?: string | null;
        amount?: number;
        amount_captured?: number;
        currency?: string;
      }
    | null;
};

export const STRIPE_API: ProviderApi = { provider: "Stripe", hosts: ["api.stripe.com"] };
const stripeBase = (settings: Record<string, unknown>) =>
  apiBaseOrThrow(String(settings.apiBaseUrl ?? "https://api.stripe.com"), STRIPE_API);

function api(settings: Record<string, unknown>) {
  const base = stripeBase(settings);
  const key = settings.apiKey;
  if (typeof key !== "string" || !key) throw new Error("the stripe endpoint has no apiKey in its settings");
  return async (path: string): Promise<Response> => {
    const response = await fetch(`${base}${path}`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(30_000),
    });
    if (response.status >= 500 || response.status === 401 || response.status === 403 || response.status === 429) {
      throw new Error(`Stripe API ${path.split("?")[0]} answered ${response.status}`);
    }
    return response;
  };
}

/**
 * The line as our parser would post it: the reference (payment intent, else charge, for
 * charges; refund id for refunds) and the amount in the posting's currency, taken from
 * the expanded source object; the settlement amount stays in `raw` as evidence.
 */
export function lineOf(t: BalanceTransaction, row: number): SettlementLine {
  const source = typeof t.source === "object" && t.source ? t.source : null;
  const sourceId = typeof t.source === "string" ? t.source : (source?.id ?? t.id);
  const category = stripeCategory(t.reporting_category);
  const base = category.key === "payment" ? (source?.payment_intent ?? sourceId) : sourceId;
  const reference = category.suffix ? `${base}${category.suffix}` : base;
  // The posting's currency and amount: the source object's, in Stripe's units.
  let amount = BigInt(t.amount);
  let currency = t.currency;
  if (source?.currency && typeof source.amount === "number") {
    currency = source.currency;
    const sign = (n: bigint) => (t.amount < 0 ? -n : n);
    if (t.reporting_category === "charge") amount = BigInt(source.amount);
    else if (t.reporting_category === "partial_capture_reversal" && typeof source.amount_captured === "number")
      amount = -BigInt(source.amount - source.amount_captured);
    else amount = sign(BigInt(source.amount));
  }
  const iso = fromStripeMinor(amount, currency);
  if (!iso.ok) throw new Error(`balance transaction ${t.id}: ${iso.error}`);
  const fee = t.fee ? fromStripeMinor(BigInt(t.fee), t.currency) : null;
  if (fee && !fee.ok) throw new Error(`balance transaction ${t.id}: fee: ${fee.error}`);
  const crossCurrency = currency.toLowerCase() !== t.currency.toLowerCase();
  const settled = crossCurrency ? fromStripeMinor(BigInt(t.amount), t.currency) : null;
  if (settled && !settled.ok) throw new Error(`balance transaction ${t.id}: ${settled.error}`);
  return {
    row,
    reference,
    kind: category.kind,
    amount: iso.value,
    currency: currency.toUpperCase(),
    occurredAt: new Date(t.created * 1000),
    raw: JSON.stringify(t),
    lineId: t.id,
    ...(settled?.ok && { settledGross: settled.value, settledCurrency: t.currency.toUpperCase() }),
    ...(fee?.ok && fee.value !== 0n && category.kind !== "OTHER" && { fee: fee.value }),
    ...(category.kind === "PAYOUT" && { payout: base }),
    ...(category.notReconciled && { notReconciled: category.notReconciled }),
  };
}

export const stripeSettlement: SettlementSource = {
  description: "Stripe balance transactions API",

  async *lines(endpoint: EndpointContext, window: Window) {
    const get = api(endpoint.settings);
    const from = Math.floor(window.from.getTime() / 1000);
    const to = Math.ceil(window.to.getTime() / 1000);
    let after: string | null = null;
    let row = 0;
    while (true) {
      const query = `created[gte]=${from}&created[lt]=${to}&limit=100&expand[]=data.source${after ? `&starting_after=${after}` : ""}`;
      const response = await get(`/v1/balance_transactions?${query}`);
      if (!response.ok)
        throw new Error(
          `Stripe API balance_transactions answered ${response.status}: ${(await response.text()).slice(0, 200)}`,
        );
      const page = (await response.json()) as { data: BalanceTransaction[]; has_more: boolean };
      for (const t of page.data) {
        yield lineOf(t, ++row);
      }
      if (!page.has_more || page.data.length === 0) break;
      after = page.data.at(-1)!.id;
    }
  },

  /**
   * Stripe lists the events whose delivery to an endpoint failed or is still pending
   * (`delivery_success=false`), newest first, for the last 30 days. Each is the event
   * object exactly as a webhook would carry it, so the parser reads it unchanged.
   */
  async *undelivered(endpoint: EndpointContext, window: Window) {
    const get = api(endpoint.settings);
    const base = stripeBase(endpoint.settings);
    const from = Math.floor(window.from.getTime() / 1000);
    const to = Math.ceil(window.to.getTime() / 1000);
    let after: string | null = null;
    while (true) {
      const query = `delivery_success=false&created[gte]=${from}&created[lt]=${to}&limit=100${after ? `&starting_after=${after}` : ""}`;
      const response = await get(`/v1/events?${query}`);
      if (!response.ok)
        throw new Error(`Stripe API events answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
      const page = (await response.json()) as { data: { id: string }[]; has_more: boolean };
      for (const event of page.data) {
        yield {
          rawBody: Buffer.from(JSON.stringify(event)),
          headers: { "content-type": "application/json" },
          fetchedFrom: `${base}/v1/events/${event.id}`,
          deliveryId: event.id,
        };
      }
      if (!page.has_more || page.data.length === 0) break;
      after = page.data.at(-1)!.id;
    }
  },

  /** A missing event is rebuilt from the object's current state, as the event Stripe would have sent. */
  async fetchEvent(endpoint: EndpointContext, reference: string): Promise<FetchedEvent | null> {
    const get = api(endpoint.settings);
    const [path, type] = reference.startsWith("re_")
      ? ["refunds", "refund.updated"]
      : reference.startsWith("ch_")
        ? ["charges", "charge.succeeded"]
        : reference.startsWith("po_")
          ? ["payouts", "payout.paid"]
          : ["payment_intents", "payment_intent.succeeded"];
    const response = await get(`/v1/${path}/${encodeURIComponent(reference)}`);
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(`Stripe API ${path} answered ${response.status}`);
    const object = (await response.json()) as { id: string; created?: number };
    const event = {
      id: `evt_tally_recon_${object.id}`,
      object: "event",
      type,
      created: object.created ?? Math.floor(Date.now() / 1000),
      data: { object },
    };
    return {
      rawBody: Buffer.from(JSON.stringify(event)),
      headers: { "content-type": "application/json" },
      fetchedFrom: `${stripeBase(endpoint.settings)}/v1/${path}/${reference}`,
    };
  },
};
