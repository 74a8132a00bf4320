// Paystack's side of reconciliation: its record of successful transactions, processed
// refunds and lost disputes for a window, the settlements that paid them out, and
// single objects for events that never arrived. The endpoint's settings name the
// secret key (apiKey, sk_live_… or sk_test_…) and, for the simulator or a proxy, the
// base URL (apiBaseUrl, default https://api.paystack.co).
//
// Why the payments come from the transaction list, not from GET /settlement: Paystack
// batches payouts a business day or more after the payment, so a settlement listing of
// yesterday's window would leave its last day looking like ours-not-theirs every
// night. The transaction and refund lists are the same record those settlements are
// made from, complete the moment money moves, which is what Stripe's balance
// transactions are on the Stripe side. Settlements only add to those lines: which
// payout paid each one, and the payout itself. A payment not settled yet is still a
// PAYMENT line, without a payout: it matches its posting, and its payout's statement
// is judged by a later run that sees both.
//
// | line             | from                                 | reference          | amount             | fee / payout                         |
// |------------------|--------------------------------------|--------------------|--------------------|--------------------------------------|
// | PAYMENT          | GET /transaction?status=success      | reference          | amount             | fees / the settlement listing it     |
// | REFUND           | GET /refund (status processed,       | id                 | −amount            | – / refund.settlement                |
// |                  | no dispute)                          |                    |                    |                                      |
// | DISPUTE          | GET /dispute?status=resolved, lost   | dsp_<id>           | −refund_amount     | – / its refund's settlement          |
// | PAYOUT           | GET /settlement (not failed)         | stl_<id>           | −effective_amount  | payout: itself; arrival settlement_date |
// | PAYOUT + FAILED  | GET /settlement (status failed)      | stl_<id>, …:failed | −/+effective_amount| payout: the settlement               |
//
// The settlement object (GET /settlement: id, status success | processing | pending |
// failed, currency, total_processed, total_fees, total_amount = processed − fees,
// deductions, effective_amount = what was paid, settlement_date) names no bank account,
// so a payout line has no `account` and posts to bank:(unknown); it is dated by its
// createdAt (when it left the balance), and settlement_date is its arrival day. Paystack
// sends no payout webhook, so the adapter lists payouts as settlementOnly and the run posts
// each payout from its line. The payout's reference is stl_<id>, not the bare id:
// settlement, refund and dispute ids are separate counters whose ranges overlap, and a
// refund already holds the bare-number keys (see ./parse.ts).
//
// Which payout paid a payment: the transaction object carries no settlement field,
// so the settlements created from a day before the window to a week after it
// (Paystack settles T+1 business days; a long weekend is four) are listed, and each
// one's transactions read from GET /settlement/:id/transactions, a page of 100 at a
// time: a day's million transactions cost ten thousand page requests, never one
// request per transaction, and the map from reference to settlement holds an index per
// transaction, not its body. A refund names its settlement itself (refund.settlement);
// a lost dispute is carried out as a refund naming it (refund.dispute), so that refund
// is the dispute's line, not a REFUND of its own: one dispute withdraws once.
//
// Fees: each transaction's `fees` is its line's fee (positive minor units), compared as
// its own movement <reference>:fee; a fee only the settlement has is posted from it.
// A settlement's own arithmetic (total_processed − total_fees − deductions =
// effective_amount) is what the payout statement recomputes from the lines.
import { apiBaseOrThrow } from "@/lib/providers/api-base";
import { paystackDisputeReference } from "@/lib/providers/paystack/parse";
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
  fees?: number | string | null;
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
  dispute?: number | string | { id?: number | string } | null;
  settlement?: number | string | { id?: number | string } | null;
  refunded_at?: string | null;
  createdAt?: string | null;
  created_at?: string | null;
};
type Settlement = {
  id: number | string;
  status: string;
  currency: string;
  effective_amount: number | string;
  settlement_date?: string | null;
  createdAt?: string | null;
  created_at?: string | null;
};
type Dispute = {
  id: number | string;
  refund_amount?: number | string | null;
  currency?: string | null;
  status?: string | null;
  resolution?: string | null;
  transaction?: { reference?: string | null; currency?: string | null } | null;
  resolvedAt?: string | null;
  resolved_at?: string | null;
  updatedAt?: string | null;
};
type Page<T> = {
  status: boolean;
  message?: string;
  data: T[];
  meta?: { page?: number | string; pageCount?: number | string };
};

const PER_PAGE = 100;
const DAY_MS = 86_400_000;
/** How long after the window a settlement may pay it out: T+1 business days, over a long weekend. */
const SETTLEMENT_LAG_MS = 7 * DAY_MS;
/** Disputes are listed by creation; one resolved in the window may have been opened weeks before (arbitration). */
const DISPUTE_LOOKBACK_MS = 60 * DAY_MS;
const LOST = new Set(["merchant-accepted", "auto-accepted"]);

export const paystackPayoutReference = (settlementId: string | number) => `stl_${settlementId}`;

/** An id Paystack gives as a number, a string or an object holding one; undefined for null, "" and 0. */
function idOf(value: unknown): string | undefined {
  const id = value && typeof value === "object" ? (value as { id?: unknown }).id : value;
  if (typeof id === "number" && id > 0) return String(id);
  if (typeof id === "string" && id.trim() !== "" && id.trim() !== "0") return id.trim();
  return undefined;
}

/** Integer minor units from the API, or a thrown error naming the object and field: a run never guesses an amount. */
function units(value: unknown, what: string): bigint {
  const text = typeof value === "number" ? (Number.isSafeInteger(value) ? String(value) : "") : String(value ?? "");
  if (!/^-?\d+$/.test(text.trim()))
    throw new Error(`Paystack API: ${what} is not an integer of minor units: ${JSON.stringify(value)}`);
  return BigInt(text.trim());
}

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
  description: "Paystack transactions, refunds, disputes and settlements API",

  async *lines(endpoint: EndpointContext, window: Window) {
    const { get } = api(endpoint.settings);
    // Paystack filters lists by creation time, a payment's paid_at can follow it, and
    // its from/to are dates as often as times: ask wider on each side and let
    // reconciliation keep the lines whose own time falls in the window.
    const range = (before = DAY_MS, after = DAY_MS) =>
      new URLSearchParams({
        from: new Date(window.from.getTime() - before).toISOString(),
        to: new Date(window.to.getTime() + after).toISOString(),
      });
    let row = 0;

    const settlements: Settlement[] = [];
    for await (const s of listAll<Settlement>(get, "/settlement", range(DAY_MS, SETTLEMENT_LAG_MS)))
      settlements.push(s);
    // Reference -> index into settlements: a number per transaction, not its object.
    const paidBy = new Map<string, number>();
    for (const [i, s] of settlements.entries())
      for await (const t of listAll<Transaction>(
        get,
        `/settlement/${encodeURIComponent(String(s.id))}/transactions`,
        new URLSearchParams(),
      ))
        paidBy.set(t.reference, i);
    const payoutOf = (i: number | undefined) =>
      i === undefined ? undefined : paystackPayoutReference(settlements[i]!.id);

    const payments = range();
    payments.set("status", "success");
    for await (const t of listAll<Transaction>(get, "/transaction", payments)) {
      const occurredAt = when(t.paid_at, t.paidAt, t.created_at, t.createdAt);
      if (t.status !== "success" || !occurredAt) continue;
      const fee =
        t.fees === null || t.fees === undefined || t.fees === "" ? 0n : units(t.fees, `transaction ${t.id} fees`);
      if (fee < 0n) throw new Error(`Paystack API: transaction ${t.id} fees is negative (${fee})`);
      const payout = payoutOf(paidBy.get(t.reference));
      yield {
        row: ++row,
        reference: t.reference,
        kind: "PAYMENT",
        amount: units(t.amount, `transaction ${t.id} amount`),
        currency: t.currency.toUpperCase(),
        occurredAt,
        raw: JSON.stringify(t),
        lineId: `transaction:${t.id}`,
        ...(fee !== 0n && { fee }),
        ...(payout && { payout }),
      } satisfies SettlementLine;
    }

    // A lost dispute's refund: the settlement that deducted it pays out the dispute's line.
    const disputeSettlement = new Map<string, string | undefined>();
    for await (const r of listAll<Refund>(get, "/refund", range())) {
      const occurredAt = when(r.refunded_at, r.createdAt, r.created_at);
      if (r.status !== "processed" || !occurredAt) continue;
      const settlement = idOf(r.settlement);
      const payout = settlement ? paystackPayoutReference(settlement) : undefined;
      const dispute = idOf(r.dispute);
      if (dispute) {
        disputeSettlement.set(dispute, payout);
        continue;
      }
      yield {
        row: ++row,
        reference: String(r.id),
        kind: "REFUND",
        amount: -units(r.amount, `refund ${r.id} amount`),
        currency: r.currency.toUpperCase(),
        occurredAt,
        raw: JSON.stringify(r),
        lineId: `refund:${r.id}`,
        ...(payout && { payout }),
      } satisfies SettlementLine;
    }

    const resolved = range(DISPUTE_LOOKBACK_MS, DAY_MS);
    resolved.set("status", "resolved");
    for await (const d of listAll<Dispute>(get, "/dispute", resolved)) {
      const occurredAt = when(d.resolvedAt, d.resolved_at, d.updatedAt);
      // A declined (won) dispute took nothing; one still open has not moved money yet.
      if (!d.resolution || !LOST.has(d.resolution) || !occurredAt) continue;
      const amount = units(d.refund_amount, `dispute ${d.id} refund_amount`);
      const currency = d.currency || d.transaction?.currency;
      if (amount <= 0n || !currency) continue;
      const payout = disputeSettlement.get(String(d.id));
      yield {
        row: ++row,
        reference: paystackDisputeReference(d.id),
        kind: "DISPUTE",
        amount: -amount,
        currency: currency.toUpperCase(),
        occurredAt,
        raw: JSON.stringify(d),
        lineId: `dispute:${d.id}`,
        ...(payout && { payout }),
      } satisfies SettlementLine;
    }

    for (const s of settlements) {
      const occurredAt = when(s.createdAt, s.created_at, s.settlement_date);
      if (!occurredAt) continue;
      const reference = paystackPayoutReference(s.id);
      const amount = units(s.effective_amount, `settlement ${s.id} effective_amount`);
      const currency = s.currency.toUpperCase();
      const raw = JSON.stringify(s);
      if (amount <= 0n) {
        // Nothing reached the bank (Paystack lists settlements of 0): counted and shown, not posted.
        yield {
          row: ++row,
          reference,
          kind: "OTHER",
          amount: -amount,
          currency,
          occurredAt,
          raw,
          notReconciled: "settlement without a positive amount",
        } satisfies SettlementLine;
        continue;
      }
      const arrival = s.settlement_date ? new Date(s.settlement_date) : null;
      const payout = {
        row: ++row,
        reference,
        kind: "PAYOUT",
        amount: -amount,
        currency,
        occurredAt,
        raw,
        lineId: `settlement:${s.id}`,
        payout: reference,
        ...(arrival && !Number.isNaN(arrival.getTime()) && { arrivalDate: arrival }),
      } satisfies SettlementLine;
      yield payout;
      // A failed settlement left the balance and came back: the payout and its return, as Stripe's payout.failed.
      if (s.status === "failed")
        yield {
          ...payout,
          row: ++row,
          reference: `${reference}:failed`,
          kind: "PAYOUT_FAILED",
          amount,
          lineId: `settlement:${s.id}:failed`,
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
