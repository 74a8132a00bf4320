// The provider simulator: plays every provider of the day for one tenant. It keeps
// its own record of the day's money, delivers webhooks to Tally the way real
// providers do (retrying slow acknowledgements, duplicating, reordering,
// reformatting, and sometimes never delivering at all), each signed as its
// provider signs, and serves what Tally's adapters call: Stripe's settlement API
// and single-object fetches, Paystack's transaction and refund API (the API
// reconciliation sources, the adapters' `settlement`), Flutterwave's verify endpoint and PayPal's token and
// payments API (the worker confirms payments there), and the certificate its PayPal deliveries are signed with (trusted by Tally only under
// TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES).
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Day, Delivery } from "@/dev/simulator/day";
import { FlutterwaveAccounts, serveFlutterwaveVerify } from "@/dev/simulator/flutterwave-api";
import { PaypalAccounts, servePaypalApi } from "@/dev/simulator/paypal-api";
import { stripeCharge, stripePaymentIntent, stripeRefund, type SimMovement } from "@/dev/simulator/payloads";
import { PaystackAccounts, servePaystackApi } from "@/dev/simulator/paystack-api";
import {
  certificateUrl,
  servePaypalCertificate,
  simulatorPaypalCertificate,
  type PaypalSigning,
} from "@/dev/simulator/paypal-certificate";
import { signedDelivery, type TenantSecrets } from "@/dev/simulator/sign";

export type DeliveryReport = {
  deliveries: number;
  attempts: number;
  byStatus: Record<string, number>;
  /** Redelivered because Tally's acknowledgement was slower than the provider's timeout. */
  slowAckRetries: number;
  /** Stripe movements never delivered: reconciliation through this simulator must find every one. */
  dropped: string[];
  /** Other providers' movements never delivered (provider:reference): Paystack's show in its API here; the rest only a report would show. */
  droppedElsewhere: string[];
  /** Deliveries beyond the first for a movement (retries, reformatted copies, second event types). */
  duplicates: number;
};

export type Simulator = {
  url: string;
  /** Stripe's API key (settings.apiKey of the stripe endpoint). */
  apiKey: string;
  /** Paystack's secret key (settings.apiKey of the paystack endpoint; settings.apiBaseUrl is url). */
  paystackKey: string;
  /** Flutterwave's secret key (settings.secretKey of the flutterwave endpoint; settings.apiBaseUrl is url). */
  flutterwaveKey: string;
  /** PayPal's REST app credentials (settings.clientId/clientSecret of the paypal endpoint; settings.apiBaseUrl is url). */
  paypalClientId: string;
  paypalClientSecret: string;
  /** Where the certificate of its PayPal deliveries is served: Tally must trust this URL's prefix. */
  paypalCertUrl: string;
  /** The Stripe movements it settled for the tenant (dropped ones included: the provider settled them). */
  movements: SimMovement[];
  /** Its Stripe balance transactions (charges and refunds with their fees, and the payouts), as its API lists them. */
  balanceTransactions: BalanceTransaction[];
  /** Its Stripe payouts of the day (one per currency, the day's net): delivered as payout.paid after the rest. */
  payouts: StripePayout[];
  deliver(
    target: string,
    secrets: TenantSecrets,
    options?: { concurrency?: number; ackTimeoutMs?: number; maxAttempts?: number },
  ): Promise<DeliveryReport>;
  /** Sends the movement's first event now: a late real webhook. */
  redeliver(target: string, secrets: TenantSecrets, reference: string): Promise<number>;
  close(): Promise<void>;
};

export type BalanceTransaction = {
  id: string;
  object: string;
  amount: number;
  fee: number;
  net: number;
  currency: string;
  created: number;
  reporting_category: string;
  type: string;
  source: string;
};

function balanceTransactions(movements: SimMovement[]): BalanceTransaction[] {
  const lines: BalanceTransaction[] = movements.map((m, i) => {
    const fee = m.kind === "PAYMENT" ? Math.round(m.amount * 0.029) + 30 : 0;
    const amount = m.kind === "PAYMENT" ? m.amount : -m.amount;
    return {
      id: `txn_${String(i).padStart(8, "0")}`,
      object: "balance_transaction",
      amount,
      fee,
      net: amount - fee,
      currency: m.currency.toLowerCase(),
      created: m.created,
      reporting_category: m.kind === "PAYMENT" ? "charge" : "refund",
      type: m.kind === "PAYMENT" ? "charge" : "refund",
      source: m.kind === "PAYMENT" ? m.chargeId! : m.reference,
    };
  });
  // The day's net paid out, per currency: a payout line, and a payout.paid webhook (stripePayouts).
  const byCurrency = new Map<string, number>();
  for (const l of lines) byCurrency.set(l.currency, (byCurrency.get(l.currency) ?? 0) + l.net);
  const last = Math.max(0, ...lines.map((l) => l.created));
  for (const [currency, net] of byCurrency)
    lines.push({
      id: `txn_payout_${currency}`,
      object: "balance_transaction",
      amount: -net,
      fee: 0,
      net: -net,
      currency,
      created: last,
      reporting_category: "payout",
      type: "payout",
      source: `po_${currency}`,
    });
  return lines.sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
}

export type StripePayout = {
  id: string;
  object: "payout";
  amount: number;
  currency: string;
  arrival_date: number;
  created: number;
  destination: string;
  status: "paid";
  automatic: true;
};

/** The payouts behind the payout lines, as Stripe's API and its payout.paid webhook show them. */
function stripePayouts(lines: BalanceTransaction[]): StripePayout[] {
  return lines
    .filter((t) => t.reporting_category === "payout" && t.amount < 0)
    .map((t) => ({
      id: t.source,
      object: "payout",
      amount: -t.amount,
      currency: t.currency,
      arrival_date: Math.floor(t.created / 86_400) * 86_400 + 2 * 86_400,
      created: t.created,
      destination: "ba_simulator",
      status: "paid",
      automatic: true,
    }));
}

/** The event Stripe would have sent for a movement (the payment's intent succeeded, or the refund created). */
function stripeEventOf(m: SimMovement, id: string) {
  return m.kind === "PAYMENT"
    ? {
        id,
        object: "event",
        type: "payment_intent.succeeded",
        created: m.created,
        data: { object: stripePaymentIntent(m) },
      }
    : { id, object: "event", type: "refund.created", created: m.created, data: { object: stripeRefund(m) } };
}

export async function startSimulator(o: {
  day: Day;
  tenant: string;
  apiKey?: string;
  paystackKey?: string;
  flutterwaveKey?: string;
  paypalClientId?: string;
  paypalClientSecret?: string;
  port?: number;
}): Promise<Simulator> {
  const apiKey = o.apiKey ?? "sk_test_simulator";
  const paystackKey = o.paystackKey ?? "sk_test_paystack_simulator";
  const paystack = new PaystackAccounts().add(
    paystackKey,
    o.day.movements.filter((m) => m.tenant === o.tenant),
  );
  const flutterwaveKey = o.flutterwaveKey ?? "FLWSECK_TEST-simulator-X";
  const flutterwave = new FlutterwaveAccounts().add(
    flutterwaveKey,
    o.day.movements.filter((m) => m.tenant === o.tenant),
  );
  const paypalClientId = o.paypalClientId ?? "AVsimulatorClientId";
  const paypalClientSecret = o.paypalClientSecret ?? "EPsimulatorClientSecret";
  const paypalApi = new PaypalAccounts().add(
    paypalClientId,
    paypalClientSecret,
    o.day.movements.filter((m) => m.tenant === o.tenant),
  );
  let paypal: PaypalSigning | null = null;
  const movements = o.day.movements.filter((m) => m.tenant === o.tenant && m.provider === "stripe");
  const byReference = new Map(movements.map((m) => [m.reference, m]));
  const byCharge = new Map(movements.filter((m) => m.chargeId).map((m) => [m.chargeId!, m]));
  const transactions = balanceTransactions(movements);
  const payouts = stripePayouts(transactions);
  const payoutsById = new Map(payouts.map((p) => [p.id, p]));
  const payoutDeliveries: Delivery[] = payouts.map((p, i) => ({
    seq: 1_000_000 + i,
    tenant: o.tenant,
    provider: "stripe",
    body: JSON.stringify({
      id: `evt_payout_${p.id}`,
      object: "event",
      type: "payout.paid",
      created: p.created,
      data: { object: p },
    }),
    signature: "valid",
    messageId: `msg_payout_${p.id}`,
    note: "first",
    reference: p.id,
  }));
  // What Stripe failed to deliver: the day's dropped movements, and any whose every attempt failed.
  const undelivered = new Set(
    o.day.dropped.filter((m) => m.tenant === o.tenant && m.provider === "stripe").map((m) => m.reference),
  );

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://sim");
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (paypal && servePaypalCertificate(req, res, paypal.certUrl)) return;
    if (serveFlutterwaveVerify(req, res, flutterwave)) return;
    if (servePaypalApi(req, res, paypalApi)) return;
    if (servePaystackApi(req, res, paystack)) return;
    if (req.headers.authorization !== `Bearer ${apiKey}`)
      return send(401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } });
    if (url.pathname === "/v1/balance_transactions") {
      const gte = Number(url.searchParams.get("created[gte]") ?? 0);
      const lt = Number(url.searchParams.get("created[lt]") ?? Infinity);
      const limit = Math.min(100, Number(url.searchParams.get("limit") ?? 10));
      const after = url.searchParams.get("starting_after");
      const expand = url.searchParams.getAll("expand[]").includes("data.source");
      let list = transactions.filter((t) => t.created >= gte && t.created < lt);
      if (after) list = list.slice(list.findIndex((t) => t.id === after) + 1);
      const page = list.slice(0, limit).map((t) => {
        if (!expand) return t;
        const m = byCharge.get(t.source) ?? byReference.get(t.source);
        const source = !m
          ? { id: t.source, object: "payout" }
          : m.kind === "PAYMENT"
            ? stripeCharge(m)
            : stripeRefund(m);
        return { ...t, source };
      });
      return send(200, { object: "list", data: page, has_more: list.length > limit, url: "/v1/balance_transactions" });
    }
    if (url.pathname === "/v1/events") {
      // Only the filter the gap check uses: events not (yet) delivered, newest first, by creation time.
      if (url.searchParams.get("delivery_success") !== "false")
        return send(400, { error: { message: "the simulator serves only delivery_success=false" } });
      const gte = Number(url.searchParams.get("created[gte]") ?? 0);
      const lt = Number(url.searchParams.get("created[lt]") ?? Infinity);
      const limit = Math.min(100, Number(url.searchParams.get("limit") ?? 10));
      const after = url.searchParams.get("starting_after");
      let list = movements
        .filter((m) => undelivered.has(m.reference) && m.created >= gte && m.created < lt)
        .map((m) => stripeEventOf(m, `evt_undelivered_${m.reference}`))
        .sort((a, b) => b.created - a.created || b.id.localeCompare(a.id));
      if (after) list = list.slice(list.findIndex((e) => e.id === after) + 1);
      return send(200, {
        object: "list",
        data: list.slice(0, limit),
        has_more: list.length > limit,
        url: "/v1/events",
      });
    }
    const payout = /^\/v1\/payouts\/([^/]+)$/.exec(url.pathname);
    if (payout) {
      const p = payoutsById.get(decodeURIComponent(payout[1]!));
      return p
        ? send(200, p)
        : send(404, { error: { type: "invalid_request_error", message: `No such payout: '${payout[1]}'` } });
    }
    const object = /^\/v1\/(payment_intents|refunds|charges)\/([^/]+)$/.exec(url.pathname);
    if (object) {
      const [, kind, id] = object;
      const m = kind === "charges" ? byCharge.get(decodeURIComponent(id!)) : byReference.get(decodeURIComponent(id!));
      if (!m || (kind === "refunds") !== (m.kind === "REFUND"))
        return send(404, { error: { type: "invalid_request_error", message: `No such ${kind}: '${id}'` } });
      return send(
        200,
        kind === "payment_intents" ? stripePaymentIntent(m) : kind === "charges" ? stripeCharge(m) : stripeRefund(m),
      );
    }
    send(404, { error: { message: `Unrecognized request URL (${req.method}: ${url.pathname})` } });
  });
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const signing: PaypalSigning = {
    privateKey: simulatorPaypalCertificate().privateKey,
    certUrl: certificateUrl(`${url}/v1/notifications/certs/`),
  };
  paypal = signing;

  const post = async (target: string, d: Delivery, secrets: TenantSecrets, timeoutMs: number) => {
    // Signed per attempt: signatures carry the time they were made.
    const signed = signedDelivery(d, secrets, { paypal: signing });
    const response = await fetch(`${target}/api/webhooks/${d.tenant}/${d.provider}`, {
      method: "POST",
      headers: signed.headers,
      body: signed.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.arrayBuffer();
    return response.status;
  };

  return {
    url,
    apiKey,
    paystackKey,
    flutterwaveKey,
    paypalClientId,
    paypalClientSecret,
    paypalCertUrl: signing.certUrl,
    movements,
    balanceTransactions: transactions,
    payouts,
    async deliver(target, secrets, options = {}) {
      const { concurrency = 8, ackTimeoutMs = 5000, maxAttempts = 4 } = options;
      const mine = o.day.deliveries.filter((d) => d.tenant === o.tenant);
      // Stripe's payouts of the day, once the day is over (only where Stripe is signed for).
      if (secrets.stripe !== undefined) mine.push(...payoutDeliveries);
      const unsigned = [...new Set(mine.map((d) => d.provider))].filter((p) => secrets[p] === undefined);
      if (unsigned.length > 0)
        throw new Error(
          `no secret for ${unsigned.join(", ")}: the simulator signs each provider's deliveries with the tenant's own secret`,
        );
      const droppedHere = o.day.dropped.filter((m) => m.tenant === o.tenant);
      const report: DeliveryReport = {
        deliveries: mine.length,
        attempts: 0,
        byStatus: {},
        slowAckRetries: 0,
        dropped: droppedHere.filter((m) => m.provider === "stripe").map((m) => m.reference),
        droppedElsewhere: droppedHere.filter((m) => m.provider !== "stripe").map((m) => `${m.provider}:${m.reference}`),
        duplicates: 0,
      };
      const firsts = new Set<string>();
      for (const d of mine) {
        if (d.note === "first" || d.note === "second-type" || d.note === "retry" || d.note === "reformatted") {
          for (const reference of d.references ?? (d.reference ? [d.reference] : [])) {
            if (firsts.has(`${d.provider}:${reference}`)) report.duplicates++;
            else firsts.add(`${d.provider}:${reference}`);
          }
        }
      }
      const queue = [...mine];
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let d = queue.shift(); d; d = queue.shift()) {
            let delivered = false;
            for (let attempt = 1; attempt <= maxAttempts; attempt++) {
              report.attempts++;
              try {
                const status = await post(target, d, secrets, ackTimeoutMs);
                report.byStatus[status] = (report.byStatus[status] ?? 0) + 1;
                delivered = status < 300;
                if (status < 500) break; // 2xx done; 4xx will not get better by retrying
              } catch {
                // No answer within the provider's timeout: it assumes failure and sends again.
                report.slowAckRetries++;
                report.byStatus.timeout = (report.byStatus.timeout ?? 0) + 1;
              }
            }
            // Stripe lists an event as undelivered until some delivery of it succeeds.
            if (d.provider === "stripe" && d.signature === "valid" && !delivered)
              for (const r of d.references ?? (d.reference ? [d.reference] : [])) undelivered.add(r);
          }
        }),
      );
      return report;
    },
    async redeliver(target, secrets, reference) {
      const d =
        o.day.deliveries.find(
          (x) =>
            x.tenant === o.tenant &&
            x.signature === "valid" &&
            (x.reference === reference || x.references?.includes(reference)),
        ) ?? null;
      const m = byReference.get(reference);
      if (d) return post(target, d, secrets, 5000);
      if (!m) throw new Error(`the simulator has no movement ${reference}`);
      const body = JSON.stringify(stripeEventOf(m, `evt_late_${reference}`));
      return post(
        target,
        {
          tenant: m.tenant,
          provider: "stripe",
          body,
          signature: "valid",
          messageId: `msg_late_${reference}`,
          note: "first",
          seq: -1,
          reference,
        },
        secrets,
        5000,
      );
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
