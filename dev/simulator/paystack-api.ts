// Paystack's API as the simulator plays it, answering from the day's truth for the
// secret key each tenant's movements belong to: the transaction, refund, settlement
// and dispute lists reconciliation reads (lib/providers/paystack/settlement.ts), a
// settlement's transactions, and the single objects it fetches for events that never
// arrived. Shapes follow Paystack's API (PaystackOSS/doc-code-snippets, dist/api/*):
// { status, message, data, meta: { total, perPage, page, pageCount } }.
//
// Settlements: Paystack pays out a day's balance per currency the next day. Here the
// payments paid, refunds processed and disputes lost on UTC day D in one currency are
// one settlement, created at 01:00 on D+1 with settlement_date D+1: total_processed
// the payments, total_fees their fees, total_amount the difference, deductions the
// refunds and lost disputes, effective_amount what reached the bank. Each refund (and
// each lost dispute's refund) names its settlement; GET /settlement/:id/transactions
// lists the payments it paid. `settlements(key)` hands a test the list to plant a
// defect in (a settlement paid short).
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  paystackDispute,
  paystackDisputeRefund,
  paystackFee,
  paystackRefund,
  paystackTransaction,
  paystackTransactionId,
  type SimDispute,
} from "@/lib/providers/paystack/simulate";
import { isoMillis, type SimMovement } from "@/lib/providers/simulation/script";

export type PaystackSettlement = {
  id: number;
  domain: "test";
  status: "success" | "processing" | "pending" | "failed";
  currency: string;
  integration: number;
  total_amount: number;
  effective_amount: number;
  total_fees: number;
  total_processed: number;
  deductions: number | null;
  settlement_date: string;
  settled_by: null;
  createdAt: string;
  updatedAt: string;
};

type Ledger = {
  payments: SimMovement[];
  refunds: SimMovement[];
  disputes: SimDispute[];
  settlements: PaystackSettlement[];
  /** Settlement id by payment or refund reference, and by `dispute:<id>` for a lost dispute. */
  settledBy: Map<string, number>;
};

const DAY = 86_400;
const utcDay = (unix: number) => Math.floor(unix / DAY) * DAY;

/** The movements each secret key may see. */
export class PaystackAccounts {
  private readonly byKey = new Map<string, Ledger>();

  add(secretKey: string, movements: readonly SimMovement[], o: { disputes?: readonly SimDispute[] } = {}): this {
    const mine: Ledger = this.byKey.get(secretKey) ?? {
      payments: [],
      refunds: [],
      disputes: [],
      settlements: [],
      settledBy: new Map(),
    };
    for (const m of movements)
      if (m.provider === "paystack") (m.kind === "PAYMENT" ? mine.payments : mine.refunds).push(m);
    mine.disputes.push(...(o.disputes ?? []));
    mine.payments.sort((a, b) => a.created - b.created);
    mine.refunds.sort((a, b) => a.created - b.created);
    settle(mine);
    this.byKey.set(secretKey, mine);
    return this;
  }

  ledger(secretKey: string): Ledger | null {
    return this.byKey.get(secretKey) ?? null;
  }

  /** The settlements served to this key, as a list a test may change (a defect planted in what Paystack reports). */
  settlements(secretKey: string): PaystackSettlement[] {
    return this.byKey.get(secretKey)?.settlements ?? [];
  }
}

/** Groups the day's money into daily settlements per currency (see the header). */
function settle(ledger: Ledger) {
  type Group = { currency: string; day: number; processed: number; fees: number; deductions: number; keys: string[] };
  const groups = new Map<string, Group>();
  const into = (currency: string, at: number, key: string, f: (g: Group) => void) => {
    const day = utcDay(at);
    const id = `${day}|${currency}`;
    const g = groups.get(id) ?? { currency, day, processed: 0, fees: 0, deductions: 0, keys: [] };
    f(g);
    g.keys.push(key);
    groups.set(id, g);
  };
  for (const p of ledger.payments)
    into(p.currency, p.created, p.reference, (g) => {
      g.processed += p.amount;
      g.fees += paystackFee(p);
    });
  for (const r of ledger.refunds) into(r.currency, r.created, r.reference, (g) => (g.deductions += r.amount));
  for (const d of ledger.disputes)
    if (d.outcome === "lost")
      into(d.payment.currency, d.resolved, `dispute:${d.id}`, (g) => (g.deductions += d.refundAmount));
  const ordered = [...groups.values()].sort((a, b) => a.day - b.day || a.currency.localeCompare(b.currency));
  ledger.settlements.length = 0;
  ledger.settledBy.clear();
  ordered.forEach((g, i) => {
    const id = 3_090_000 + i;
    const next = g.day + DAY;
    const total = g.processed - g.fees;
    ledger.settlements.push({
      id,
      domain: "test",
      status: "success",
      currency: g.currency,
      integration: 463_433,
      total_amount: total,
      effective_amount: total - g.deductions,
      total_fees: g.fees,
      total_processed: g.processed,
      deductions: g.deductions === 0 ? null : g.deductions,
      settlement_date: isoMillis(next),
      settled_by: null,
      createdAt: isoMillis(next + 3600),
      updatedAt: isoMillis(next + 8 * 3600),
    });
    for (const key of g.keys) ledger.settledBy.set(key, id);
  });
}

const API_PATHS = /^\/(transaction|refund|settlement|dispute)(\/verify\/[^/]+|\/[^/]+(?:\/transactions?)?)?$/;

/** Answers Paystack's API; false when the request is for something else. */
export function servePaystackApi(req: IncomingMessage, res: ServerResponse, accounts: PaystackAccounts): boolean {
  const url = new URL(req.url ?? "/", "http://sim");
  const match = API_PATHS.exec(url.pathname);
  if (req.method !== "GET" || !match) return false;
  const send = (status: number, body: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
  const ledger = accounts.ledger(key);
  if (!ledger) return (send(401, { status: false, message: "Invalid key" }), true);
  const [, resource, rest] = match;
  const settlementOf = (key: string) => ledger.settledBy.get(key) ?? null;
  const disputeRefunds = () =>
    ledger.disputes
      .filter((d) => d.outcome === "lost")
      .map((d) => paystackDisputeRefund(d, settlementOf(`dispute:${d.id}`)));

  // Lists filter by creation time; the simulator's movements are created when they happen.
  const from = url.searchParams.get("from") ? Date.parse(url.searchParams.get("from")!) / 1000 : -Infinity;
  const to = url.searchParams.get("to") ? Date.parse(url.searchParams.get("to")!) / 1000 : Infinity;
  const inRange = (unix: number) => unix >= from && unix <= to;
  const status = url.searchParams.get("status");
  const list = (message: string, all: unknown[]) => {
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get("perPage") ?? 50)));
    const page = Math.max(1, Number(url.searchParams.get("page") ?? 1));
    send(200, {
      status: true,
      message,
      data: all.slice((page - 1) * perPage, page * perPage),
      meta: {
        total: all.length,
        skipped: (page - 1) * perPage,
        perPage,
        page,
        pageCount: Math.max(1, Math.ceil(all.length / perPage)),
      },
    });
    return true;
  };

  if (resource === "settlement") {
    if (!rest) {
      const all = ledger.settlements.filter(
        (s) => inRange(Date.parse(s.createdAt) / 1000) && (!status || s.status === status),
      );
      return list("Settlements retrieved", all);
    }
    const paid = /^\/([^/]+)\/transactions?$/.exec(rest);
    const id = Number(decodeURIComponent(paid?.[1] ?? ""));
    if (!paid || !ledger.settlements.some((s) => s.id === id))
      return (send(404, { status: false, message: "Settlement not found" }), true);
    return list(
      "Transactions retrieved",
      ledger.payments.filter((p) => settlementOf(p.reference) === id).map(paystackTransaction),
    );
  }

  if (resource === "dispute") {
    const shown = (d: SimDispute) => paystackDispute(d, "resolved");
    if (!rest)
      return list(
        "Disputes retrieved",
        ledger.disputes.filter((d) => inRange(d.created) && (!status || status === "resolved")).map(shown),
      );
    const d = ledger.disputes.find((x) => String(x.id) === decodeURIComponent(rest.slice(1)));
    if (!d) return (send(404, { status: false, message: "Dispute not found" }), true);
    return (send(200, { status: true, message: "Dispute retrieved", data: shown(d) }), true);
  }

  if (!rest) {
    if (resource === "transaction") {
      const listed = status && status !== "success" ? [] : ledger.payments.filter((m) => inRange(m.created));
      return list("Transactions retrieved", listed.map(paystackTransaction));
    }
    const refunds = [
      ...ledger.refunds.filter((m) => inRange(m.created)).map((m) => paystackRefund(m, settlementOf(m.reference))),
      ...disputeRefunds().filter((r) => inRange(Date.parse(r.createdAt) / 1000)),
    ];
    return list("Refunds retrieved", refunds);
  }

  const id = decodeURIComponent(rest.replace(/^\/(verify\/)?/, ""));
  if (resource === "transaction") {
    const byVerify = rest.startsWith("/verify/");
    const m = ledger.payments.find((p) => (byVerify ? p.reference === id : String(paystackTransactionId(p)) === id));
    if (!m)
      return (
        send(byVerify ? 400 : 404, {
          status: false,
          message: byVerify ? "Transaction reference not found" : "Transaction not found",
        }),
        true
      );
    return (
      send(200, {
        status: true,
        message: byVerify ? "Verification successful" : "Transaction retrieved",
        data: paystackTransaction(m),
      }),
      true
    );
  }
  const m = ledger.refunds.find((r) => r.reference === id);
  const ofDispute = disputeRefunds().find((r) => String(r.id) === id);
  if (!m && !ofDispute) return (send(404, { status: false, message: "Refund not found" }), true);
  send(200, {
    status: true,
    message: "Refund retrieved",
    data: m ? paystackRefund(m, settlementOf(m.reference)) : ofDispute,
  });
  return true;
}
