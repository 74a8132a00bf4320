import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { resetConfigForTests } from "@/lib/platform/config";
import { paypalConfirmer } from "@/lib/providers/paypal/confirm";
import type { Movement } from "@/lib/providers/types";

// A stand-in for PayPal's REST API on 127.0.0.1: the token endpoint checks the
// client credentials; each test says what the payments endpoint answers.
type Answer = { status: number; body: unknown; delayMs?: number };
let answer: Answer;
let tokenAnswer: Answer | null = null;
let seen: { method: string; url: string; authorization: string; body: string }[] = [];
let server: Server;
let baseUrl: string;
let issued = 0;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization ?? "", body });
      const send = (a: Answer) =>
        setTimeout(
          () =>
            res
              .writeHead(a.status, { "content-type": "application/json" })
              .end(typeof a.body === "string" ? a.body : JSON.stringify(a.body)),
          a.delayMs ?? 0,
        );
      if (req.url === "/v1/oauth2/token") {
        if (tokenAnswer) return send(tokenAnswer);
        const ok =
          req.headers.authorization === `Basic ${Buffer.from("client-1:secret-1").toString("base64")}` &&
          body === "grant_type=client_credentials";
        return send(
          ok
            ? { status: 200, body: { access_token: `token-${++issued}`, token_type: "Bearer", expires_in: 32400 } }
            : { status: 401, body: { error: "invalid_client", error_description: "Client Authentication failed" } },
        );
      }
      send(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  vi.unstubAllEnvs();
  resetConfigForTests();
});

const capture: Movement = {
  kind: "PAYMENT",
  reference: "42311647XV020574X",
  account: "acct_alice",
  amount: 3000n,
  currency: "USD",
  occurredAt: new Date("2026-12-02T14:49:58Z"),
  description: "PayPal capture 42311647XV020574X",
};
const refund: Movement = {
  ...capture,
  kind: "REFUND",
  reference: "1JU08902781691411",
  account: null,
  amount: 100n,
  paymentReference: "42311647XV020574X",
  description: "PayPal refund",
};

const captureRecord = (o: Record<string, unknown> = {}) => ({
  id: "42311647XV020574X",
  status: "COMPLETED",
  amount: { currency_code: "USD", value: "30.00" },
  custom_id: "acct_alice",
  final_capture: true,
  links: [{ href: "https://api.paypal.com/v2/checkout/orders/7F7ORDER2934", rel: "up", method: "GET" }],
  ...o,
});
const refundRecord = (o: Record<string, unknown> = {}) => ({
  id: "1JU08902781691411",
  status: "COMPLETED",
  amount: { currency_code: "USD", value: "1.00" },
  links: [
    { href: "https://api.paypal.com/v2/payments/refunds/1JU08902781691411", rel: "self", method: "GET" },
    { href: "https://api.paypal.com/v2/payments/captures/42311647XV020574X", rel: "up", method: "GET" },
  ],
  ...o,
});

const settings = (o: Record<string, unknown> = {}) => ({
  webhookId: "WH-1",
  clientId: "client-1",
  clientSecret: "secret-1",
  apiBaseUrl: baseUrl,
  ...o,
});

describe("confirming a PayPal capture or refund through PayPal's API", () => {
  it("takes a client-credentials token, asks GET /v2/payments/captures/{id}, and returns PayPal's record to post", async () => {
    const confirm = paypalConfirmer({ timeoutMs: 500 });
    answer = { status: 200, body: captureRecord() };
    seen = [];
    expect(await confirm(capture, settings())).toEqual({ ok: true, movement: capture });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      "POST /v1/oauth2/token",
      "GET /v2/payments/captures/42311647XV020574X",
    ]);
    expect(seen[1]!.authorization).toMatch(/^Bearer token-\d+$/);
  });

  it("keeps the token until it nears expiry, then makes a new one", async () => {
    let now = 1_000_000_000;
    const confirm = paypalConfirmer({ timeoutMs: 500, clock: () => now });
    answer = { status: 200, body: captureRecord() };
    seen = [];
    for (let i = 0; i < 3; i++) expect((await confirm(capture, settings())).ok).toBe(true);
    expect(seen.filter((s) => s.url === "/v1/oauth2/token")).toHaveLength(1);
    now += 32_400_000;
    expect((await confirm(capture, settings())).ok).toBe(true);
    expect(seen.filter((s) => s.url === "/v1/oauth2/token")).toHaveLength(2);
  });

  it("asks /v2/payments/refunds/{id} for a refund and checks the capture it refunds", async () => {
    const confirm = paypalConfirmer({ timeoutMs: 500 });
    answer = { status: 200, body: refundRecord() };
    seen = [];
    expect(await confirm(refund, settings())).toEqual({ ok: true, movement: refund });
    expect(seen.at(-1)!.url).toBe("/v2/payments/refunds/1JU08902781691411");
    answer = {
      status: 200,
      body: refundRecord({ links: [{ href: "https://api.paypal.com/v2/payments/captures/OTHERCAPTURE", rel: "up" }] }),
    };
    expect(await confirm(refund, settings())).toMatchObject({
      ok: false,
      reason: "mismatch",
      message: expect.stringContaining("refunded capture OTHERCAPTURE, webhook 42311647XV020574X"),
    });
  });

  it("refuses, naming the field, when PayPal's amount, currency, account or id disagree with the webhook", async () => {
    const confirm = paypalConfirmer({ timeoutMs: 500 });
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: { currency_code: "USD", value: "3000.00" } }, "amount 300000 minor units, webhook 3000"],
      [{ amount: { currency_code: "EUR", value: "30.00" } }, "currency EUR, webhook USD"],
      [{ custom_id: "acct_mallory" }, "account acct_mallory, webhook acct_alice"],
      [{ custom_id: undefined, invoice_id: "INV-7" }, "account INV-7, webhook acct_alice"],
      [{ id: "SOMEOTHERCAPTURE" }, "id SOMEOTHERCAPTURE, webhook 42311647XV020574X"],
      [{ amount: { currency_code: "USD", value: "30.005" } }, "amount unreadable"],
    ];
    for (const [change, message] of cases) {
      answer = { status: 200, body: captureRecord(change) };
      expect([change, await confirm(capture, settings())]).toEqual([
        change,
        { ok: false, reason: "mismatch", message: expect.stringContaining(message) },
      ]);
    }
  });

  it("accepts a capture PayPal shows as since refunded (the money was captured), refuses one that is not captured", async () => {
    const confirm = paypalConfirmer({ timeoutMs: 500 });
    for (const status of ["PARTIALLY_REFUNDED", "REFUNDED"]) {
      answer = { status: 200, body: captureRecord({ status }) };
      expect((await confirm(capture, settings())).ok).toBe(true);
    }
    for (const status of ["PENDING", "DECLINED", "FAILED"]) {
      answer = { status: 200, body: captureRecord({ status }) };
      expect(await confirm(capture, settings())).toMatchObject({
        ok: false,
        reason: "not_successful",
        message: expect.stringContaining(`is ${status}`),
      });
    }
    answer = { status: 200, body: refundRecord({ status: "PENDING" }) };
    expect(await confirm(refund, settings())).toMatchObject({ ok: false, reason: "not_successful" });
  });

  it("refuses a capture PayPal does not know", async () => {
    const confirm = paypalConfirmer({ timeoutMs: 500 });
    answer = { status: 404, body: { name: "RESOURCE_NOT_FOUND", message: "The specified resource does not exist." } };
    expect(await confirm(capture, settings())).toMatchObject({
      ok: false,
      reason: "not_found",
      message: expect.stringContaining("no capture 42311647XV020574X"),
    });
  });

  it("reports missing or refused credentials as configuration, asking nothing without them", async () => {
    const confirm = paypalConfirmer({ timeoutMs: 500 });
    answer = { status: 200, body: captureRecord() };
    seen = [];
    expect(await confirm(capture, { webhookId: "WH-1", apiBaseUrl: baseUrl })).toMatchObject({
      ok: false,
      reason: "not_configured",
      message: expect.stringContaining("settings.clientId"),
    });
    expect(seen).toHaveLength(0);
    expect(await confirm(capture, settings({ clientSecret: "wrong" }))).toMatchObject({
      ok: false,
      reason: "not_configured",
      message: expect.stringContaining("refused the client credentials"),
    });
  });

  it("throws, for a retry, on outages: 5xx and 429 from either endpoint, a timeout, a refused connection", async () => {
    const confirm = paypalConfirmer({ timeoutMs: 300 });
    answer = { status: 503, body: {} };
    await expect(confirm(capture, settings())).rejects.toThrow("HTTP 503; retry later");
    answer = { status: 429, body: {} };
    await expect(confirm(capture, settings())).rejects.toThrow("HTTP 429");
    answer = { status: 200, body: captureRecord(), delayMs: 1000 };
    await expect(confirm(capture, settings())).rejects.toThrow("unreachable");
    await expect(confirm(capture, settings({ apiBaseUrl: "http://127.0.0.1:1" }))).rejects.toThrow("unreachable");
    tokenAnswer = { status: 500, body: {} };
    try {
      await expect(paypalConfirmer({ timeoutMs: 300 })(capture, settings())).rejects.toThrow(
        "token API answered HTTP 500",
      );
    } finally {
      tokenAnswer = null;
    }
  });

  it("talks to a non-PayPal API only where simulators are allowed: refused in production without TALLY_ALLOW_INSECURE_SIMULATORS", async () => {
    const confirm = paypalConfirmer({ timeoutMs: 500 });
    answer = { status: 200, body: captureRecord() };
    vi.stubEnv("NODE_ENV", "production");
    resetConfigForTests();
    seen = [];
    expect(await confirm(capture, settings())).toMatchObject({
      ok: false,
      reason: "not_configured",
      message: expect.stringContaining("is not PayPal's API"),
    });
    expect(seen).toHaveLength(0);
    vi.stubEnv("TALLY_ALLOW_INSECURE_SIMULATORS", "1");
    resetConfigForTests();
    expect((await confirm(capture, settings())).ok).toBe(true);
    vi.unstubAllEnvs();
    resetConfigForTests();
    expect(await confirm(capture, settings({ apiBaseUrl: "http://api.example.com" }))).toMatchObject({
      ok: false,
      reason: "not_configured",
      message: expect.stringContaining("must be https"),
    });
  });
});
