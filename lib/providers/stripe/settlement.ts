// Stripe's settlement side: balance transactions (the ledger Stripe pays out
// from) for a window, and single objects for events that never arrived.
// The endpoint's settings name the API key (apiKey) and, for the simulator or a
// proxy, the base URL (apiBaseUrl, default https://api.stripe.com).
import type { EndpointContext, FetchedEvent, SettlementLine, SettlementSource, Window } from "@/lib/providers/types";

type BalanceTransaction = {
  id: string;
  amount: number;
  currency: string;
  created: number;
  reporting_category: string;
  source: string | { id: string; object: string; payment_intent?: string | null } | null;
};

function api(settings: Record<string, unknown>) {
  const base = String(settings.apiBaseUrl ?? "https://api.stripe.com").replace(/\/$/, "");
  const key = settings.apiKey;
  if (typeof key !== "string" || !key) throw new Error("the stripe endpoint has no apiKey in its settings");
  return async (path: string): Promise<Response> => {
    const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30_000) });
    if (response.status >= 500 || response.status === 401 || response.status === 403 || response.status === 429) {
      throw new Error(`Stripe API ${path.split("?")[0]} answered ${response.status}`);
    }
    return response;
  };
}

/** The reference our parser keys the movement by: payment intent (else charge) for charges, refund id for refunds. */
export function referenceOf(t: BalanceTransaction): { kind: SettlementLine["kind"]; reference: string } {
  const source = t.source;
  const sourceId = typeof source === "string" ? source : source?.id ?? t.id;
  if (t.reporting_category === "charge") {
    const pi = typeof source === "object" && source ? source.payment_intent : null;
    return { kind: "PAYMENT", reference: pi ?? sourceId };
  }
  if (t.reporting_category === "refund") return { kind: "REFUND", reference: sourceId };
  return { kind: "OTHER", reference: sourceId };
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
      if (!response.ok) throw new Error(`Stripe API balance_transactions answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
      const page = (await response.json()) as { data: BalanceTransaction[]; has_more: boolean };
      for (const t of page.data) {
        const { kind, reference } = referenceOf(t);
        yield { row: ++row, reference, kind, amount: BigInt(t.amount), currency: t.currency.toUpperCase(), occurredAt: new Date(t.created * 1000), raw: JSON.stringify(t) };
      }
      if (!page.has_more || page.data.length === 0) break;
      after = page.data.at(-1)!.id;
    }
  },

  /** A missing event is rebuilt from the object's current state, as the event Stripe would have sent. */
  async fetchEvent(endpoint: EndpointContext, reference: string): Promise<FetchedEvent | null> {
    const get = api(endpoint.settings);
    const [path, type] = reference.startsWith("re_") ? ["refunds", "refund.updated"] : reference.startsWith("ch_") ? ["charges", "charge.succeeded"] : ["payment_intents", "payment_intent.succeeded"];
    const response = await get(`/v1/${path}/${encodeURIComponent(reference)}`);
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(`Stripe API ${path} answered ${response.status}`);
    const object = (await response.json()) as { id: string; created?: number };
    const event = { id: `evt_tally_recon_${object.id}`, object: "event", type, created: object.created ?? Math.floor(Date.now() / 1000), data: { object } };
    return { rawBody: Buffer.from(JSON.stringify(event)), headers: { "content-type": "application/json" }, fetchedFrom: `${String(endpoint.settings.apiBaseUrl ?? "https://api.stripe.com")}/v1/${path}/${reference}` };
  },
};
