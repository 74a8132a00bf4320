// Paystack's side of reconciliation: its record of successful transactions and
// processed refunds for a window, and single objects for events that never arrived.
// The endpoint's settings name the secret key (apiKey, sk_live_… or sk_test_…) and,
// for the simulator or a proxy, the base URL (apiBaseUrl, default https://api.paystack.co).
//
// Why not GET /settlement: Paystack batches payouts a business day or more after the
// payment, so a settlement listing of yesterday's window would leave its last day
// looking like ours-not-theirs every night. The transaction and refund lists are the
// same record those settlements are made from, complete the moment money moves,
// which is what Stripe's balance transactions are on the Stripe side.
import { apiBaseOrThrow } from "@/lib/providers/api-base";
import type {
  EndpointContext,
  FetchedEvent,
  ProviderApi,
  SettlementLine,
  SettlementSource,
  Window,
} from "@/lib/providers/types";

export const PAYSTACK_API: ProviderApi = { provider: "Paystack", hosts: ["api.paystack.co"] };

type Transaction = {
  id: number;
  reference: string;
  status: string;
  amount: number | string;
  currency: string;
  paid_at?: string | null;
  paidAt?: string | null;
  created_at?: string | null;
  createdAt?: string | null;
};
type Refund = {
  id: number | string;
  status: string;
  amount: number | string;
  currency: string;
  transaction?: number | string | { id?: number; reference?: string } | null;
  transaction_reference?: string | null;
  refunded_at?: string | null;
  createdAt?: string | null;
  created_at?: string | null;
};
type Page<T> = {
  status: boolean;
  message?: string;
  data: T[];
  meta?: { page?: number | string; pageCount?: number | string };
};

const PER_PAGE = 100;
const DAY_MS = 86_400_000;

function api(settings: Record<string, unknown>) {
  const base = apiBaseOrThrow(String(settings.apiBaseUrl ?? "https://api.paystack.co"), PAYSTACK_API);
  const key = settings.apiKey;
  if (typeof key !== "string" || !key)
    throw new Error("the paystack endpoint has no apiKey (its secret key) in its settings");
  return {
    base,
    async get(path: string): Promise<Response> {
      const response = await fetch(`${base}${path}`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(30_000),
      });
      if (response.status >= 500 || response.status === 401 || response.status === 403 || response.status === 429) {
        throw new Error(`Paystack API ${path.split("?")[0]} answered ${response.status}`);
      }
      return response;
    },
  };
}

/** Every page of a list endpoint; Paystack pages by number and says how many there are. */
async function* listAll<T>(
  get: (path: string) => Promise<Response>,
  path: string,
  query: URLSearchParams,
): AsyncGenerator<T> {
  for (let page = 1; ; page++) {
    query.set("perPage", String(PER_PAGE));
    query.set("page", String(page));
    const response = await get(`${path}?${query}`);
    if (!response.ok)
      throw new Error(`Paystack API ${path} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
    const body = (await response.json()) as Page<T>;
    if (!Array.isArray(body.data)) throw new Error(`Paystack API ${path} answered without a data list`);
    yield* body.data;
    const pageCount = Number(body.meta?.pageCount ?? page);
    if (body.data.length === 0 || page >= pageCount) return;
  }
}

const when = (...candidates: (string | null | undefined)[]) => {
  for (const c of candidates) if (c) return new Date(c);
  return null;
};

export const paystackSettlement: SettlementSource = {
  description: "Paystack transactions and refunds API",

  async *lines(endpoint: EndpointContext, window: Window) {
    const { get } = api(endpoint.settings);
    // Paystack filters lists by creation time, a payment's paid_at can follow it, and
    // its from/to are dates as often as times: ask a day wider on each side and let
    // reconciliation keep the lines whose own time falls in the window.
    const range = () =>
      new URLSearchParams({
        from: new Date(window.from.getTime() - DAY_MS).toISOString(),
        to: new Date(window.to.getTime() + DAY_MS).toISOString(),
      });
    let row = 0;
    const payments = range();
    payments.set("status", "success");
    for await (const t of listAll<Transaction>(get, "/transaction", payments)) {
      const occurredAt = when(t.paid_at, t.paidAt, t.created_at, t.createdAt);
      if (t.status !== "success" || !occurredAt) continue;
      yield {
        row: ++row,
        reference: t.reference,
        kind: "PAYMENT",
        amount: BigInt(t.amount),
        currency: t.currency.toUpperCase(),
        occurredAt,
        raw: JSON.stringify(t),
      } satisfies SettlementLine;
    }
    for await (const r of listAll<Refund>(get, "/refund", range())) {
      const occurredAt = when(r.refunded_at, r.createdAt, r.created_at);
      if (r.status !== "processed" || !occurredAt) continue;
      yield {
        row: ++row,
        reference: String(r.id),
        kind: "REFUND",
        amount: -BigInt(r.amount),
        currency: r.currency.toUpperCase(),
        occurredAt,
        raw: JSON.stringify(r),
      } satisfies SettlementLine;
    }
  },

  /**
   * A missing event rebuilt as the webhook Paystack would have sent: a payment by its
   * reference (GET /transaction/verify/:reference), else a refund by its numeric id
   * (GET /refund/:id). A fetched refund names its charge only by id, so the charge's
   * reference, which the refund's payment posted under, is looked up too.
   */
  async fetchEvent(endpoint: EndpointContext, reference: string): Promise<FetchedEvent | null> {
    const { base, get } = api(endpoint.settings);
    const fetched = (event: string, data: object, path: string): FetchedEvent => ({
      rawBody: Buffer.from(JSON.stringify({ event, data })),
      headers: { "content-type": "application/json" },
      fetchedFrom: `${base}${path}`,
    });

    const verifyPath = `/transaction/verify/${encodeURIComponent(reference)}`;
    const verified = await get(verifyPath);
    if (verified.ok) {
      const { data } = (await verified.json()) as { data: Transaction };
      return data.status === "success" ? fetched("charge.success", data, verifyPath) : null;
    }
    if (verified.status !== 400 && verified.status !== 404)
      throw new Error(`Paystack API /transaction/verify answered ${verified.status}`);
    if (!/^\d+$/.test(reference)) return null;

    const refundPath = `/refund/${reference}`;
    const found = await get(refundPath);
    if (found.status === 400 || found.status === 404) return null;
    if (!found.ok) throw new Error(`Paystack API /refund answered ${found.status}`);
    const { data: refund } = (await found.json()) as { data: Refund };
    if (refund.status !== "processed") return null;
    const charge =
      typeof refund.transaction === "object"
        ? refund.transaction
        : refund.transaction == null
          ? null
          : { id: Number(refund.transaction) };
    let paymentReference = refund.transaction_reference ?? charge?.reference ?? null;
    if (!paymentReference && charge?.id !== undefined) {
      const response = await get(`/transaction/${charge.id}`);
      if (!response.ok)
        throw new Error(
          `Paystack API /transaction/${charge.id} answered ${response.status} while looking up refund ${reference}'s charge`,
        );
      paymentReference = ((await response.json()) as { data: Transaction }).data.reference;
    }
    return fetched("refund.processed", { ...refund, transaction_reference: paymentReference }, refundPath);
  },
};
