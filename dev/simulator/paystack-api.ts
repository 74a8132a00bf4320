// Paystack's API as the simulator plays it, answering from the day's truth for the
// secret key each tenant's movements belong to: the transaction and refund lists
// reconciliation reads (lib/providers/paystack/settlement.ts), and the single
// objects it fetches for events that never arrived. Shapes follow Paystack's API:
// { status, message, data, meta: { total, perPage, page, pageCount } }.
import type { IncomingMessage, ServerResponse } from "node:http";
import { paystackRefund, paystackTransaction, paystackTransactionId } from "@/lib/providers/paystack/simulate";
import type { SimMovement } from "@/lib/providers/simulation/script";

type Ledger = { payments: SimMovement[]; refunds: SimMovement[] };

/** The movements each secret key may see. */
export class PaystackAccounts {
  private readonly byKey = new Map<string, Ledger>();

  add(secretKey: string, movements: readonly SimMovement[]): this {
    const mine = this.byKey.get(secretKey) ?? { payments: [], refunds: [] };
    for (const m of movements)
      if (m.provider === "paystack") (m.kind === "PAYMENT" ? mine.payments : mine.refunds).push(m);
    mine.payments.sort((a, b) => a.created - b.created);
    mine.refunds.sort((a, b) => a.created - b.created);
    this.byKey.set(secretKey, mine);
    return this;
  }

  ledger(secretKey: string): Ledger | null {
    return this.byKey.get(secretKey) ?? null;
  }
}

const API_PATHS = /^\/(transaction|refund)(\/verify\/[^/]+|\/[^/]+)?$/;

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

  if (!rest) {
    // Lists filter by creation time; the simulator's payments and refunds are created when they happen.
    const from = url.searchParams.get("from") ? Date.parse(url.searchParams.get("from")!) / 1000 : -Infinity;
    const to = url.searchParams.get("to") ? Date.parse(url.searchParams.get("to")!) / 1000 : Infinity;
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get("perPage") ?? 50)));
    const page = Math.max(1, Number(url.searchParams.get("page") ?? 1));
    const status = url.searchParams.get("status");
    const all = (resource === "transaction" ? ledger.payments : ledger.refunds).filter(
      (m) => m.created >= from && m.created <= to,
    );
    const listed = resource === "transaction" && status && status !== "success" ? [] : all;
    const data = listed
      .slice((page - 1) * perPage, page * perPage)
      .map((m) => (resource === "transaction" ? paystackTransaction(m) : paystackRefund(m)));
    send(200, {
      status: true,
      message: resource === "transaction" ? "Transactions retrieved" : "Refunds retrieved",
      data,
      meta: {
        total: listed.length,
        skipped: (page - 1) * perPage,
        perPage,
        page,
        pageCount: Math.max(1, Math.ceil(listed.length / perPage)),
      },
    });
    return true;
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
  if (!m) return (send(404, { status: false, message: "Refund not found" }), true);
  send(200, { status: true, message: "Refund retrieved", data: paystackRefund(m) });
  return true;
}
