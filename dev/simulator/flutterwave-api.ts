// Flutterwave's verify endpoint as the simulators play it, answering from the
// day's truth: GET /v3/transactions/{id}/verify with "Authorization: Bearer
// <secret key>" returns the transaction the webhook announced, as Flutterwave's
// API shapes it. The worker asks it before crediting a Flutterwave payment
// (lib/providers/flutterwave/confirm.ts); plain http to this machine is allowed there.
import type { IncomingMessage, ServerResponse } from "node:http";
import { flutterwaveAmount, flutterwaveTransaction } from "@/lib/providers/flutterwave/simulate";
import type { SimMovement } from "@/lib/providers/simulation/script";

/** The transactions each secret key may see, by Flutterwave transaction id. */
export class FlutterwaveAccounts {
  private readonly byKey = new Map<string, Map<string, SimMovement>>();

  /** The tenant's Flutterwave payments, visible to its secret key. */
  add(secretKey: string, movements: readonly SimMovement[]): this {
    const mine = this.byKey.get(secretKey) ?? new Map<string, SimMovement>();
    for (const m of movements)
      if (m.provider === "flutterwave" && m.kind === "PAYMENT" && m.lookupId) mine.set(m.lookupId, m);
    this.byKey.set(secretKey, mine);
    return this;
  }

  lookup(secretKey: string, id: string): SimMovement | "unknown_key" | "not_found" {
    const mine = this.byKey.get(secretKey);
    if (!mine) return "unknown_key";
    return mine.get(id) ?? "not_found";
  }
}

/** Answers the verify endpoint; false when the request is for something else. */
export function serveFlutterwaveVerify(
  req: IncomingMessage,
  res: ServerResponse,
  accounts: FlutterwaveAccounts,
): boolean {
  const match = /^\/v3\/transactions\/([^/]+)\/verify$/.exec(new URL(req.url ?? "/", "http://sim").pathname);
  if (req.method !== "GET" || !match) return false;
  const send = (status: number, body: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
  const found = accounts.lookup(key, decodeURIComponent(match[1]!));
  if (found === "unknown_key")
    return (send(401, { status: "error", message: "Invalid authorization key", data: null }), true);
  if (found === "not_found")
    return (send(400, { status: "error", message: "No transaction was found for this id", data: null }), true);
  send(200, {
    status: "success",
    message: "Transaction fetched successfully",
    data: { ...flutterwaveTransaction(found), amount_settled: flutterwaveAmount(found) },
  });
  return true;
}
