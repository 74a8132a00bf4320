import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flutterwaveConfirmer } from "@/lib/providers/flutterwave/confirm";
import type { Movement } from "@/lib/providers/types";

// A stand-in for Flutterwave's API on 127.0.0.1: each test says what it answers.
type Answer = { status: number; body: unknown; delayMs?: number };
let answer: Answer;
let seen: IncomingMessage[] = [];
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req);
    const { status, body, delayMs = 0 } = answer;
    setTimeout(() => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const movement: Movement = {
  kind: "PAYMENT",
  reference: "FLW-MOCK-72d1a",
  account: null,
  amount: 150050n,
  currency: "NGN",
  occurredAt: new Date("2026-12-02T14:17:04Z"),
  description: "Flutterwave payment FLW-MOCK-72d1a",
  lookupId: "288200108",
};
const verified = (data: Record<string, unknown> = {}) => ({
  status: "success",
  message: "Transaction fetched successfully",
  data: {
    id: 288200108,
    tx_ref: "LiveCardTest",
    flw_ref: "FLW-MOCK-72d1a",
    amount: 1500.5,
    currency: "NGN",
    charged_amount: 1500.5,
    status: "successful",
    ...data,
  },
});
const confirm = flutterwaveConfirmer({ timeoutMs: 300 });
const settings = () => ({ secretKey: "FLWSECK_TEST-abc123-X", apiBaseUrl: baseUrl });
const ask = async (a: Answer, m: Movement = movement, s: Record<string, unknown> = settings()) => {
  answer = a;
  seen = [];
  return confirm(m, s);
};

describe("confirming a Flutterwave payment through its verify API", () => {
  it("asks GET /v3/transactions/{id}/verify with the secret key and confirms a matching successful transaction", async () => {
    expect(await ask({ status: 200, body: verified() })).toEqual({ ok: true, movement });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.method).toBe("GET");
    expect(seen[0]!.url).toBe("/v3/transactions/288200108/verify");
    expect(seen[0]!.headers.authorization).toBe("Bearer FLWSECK_TEST-abc123-X");
  });

  it("refuses when Flutterwave's amount, currency or reference disagree with the webhook", async () => {
    expect(await ask({ status: 200, body: verified({ amount: 15.005 }) })).toMatchObject({
      ok: false,
      reason: "mismatch",
      message: expect.stringContaining("amount unreadable"),
    });
    expect(await ask({ status: 200, body: verified({ amount: 150.05 }) })).toMatchObject({
      ok: false,
      reason: "mismatch",
      message: expect.stringContaining("amount 15005 minor units, webhook 150050"),
    });
    expect(await ask({ status: 200, body: verified({ currency: "USD" }) })).toMatchObject({
      ok: false,
      reason: "mismatch",
      message: expect.stringContaining("currency USD, webhook NGN"),
    });
    expect(await ask({ status: 200, body: verified({ flw_ref: "FLW-OTHER" }) })).toMatchObject({
      ok: false,
      reason: "mismatch",
      message: expect.stringContaining("flw_ref FLW-OTHER"),
    });
  });

  it("refuses a webhook whose account is not the one on Flutterwave's record (verif-hash covers no field)", async () => {
    const forged = { ...movement, account: "acct_mallory" };
    const onRecord = verified({ meta: { account: "acct_alice" }, customer: { id: 215000108 } });
    expect(await ask({ status: 200, body: onRecord }, forged)).toMatchObject({
      ok: false,
      reason: "mismatch",
      message: expect.stringContaining("account acct_alice, webhook acct_mallory"),
    });
    // No account in the webhook while Flutterwave has one is a disagreement too, not a licence to leave it unallocated.
    expect(await ask({ status: 200, body: onRecord }, movement)).toMatchObject({
      ok: false,
      reason: "mismatch",
      message: expect.stringContaining("account acct_alice, webhook (none)"),
    });
    // Without meta, the customer id is the account, on both sides.
    expect(
      await ask(
        { status: 200, body: verified({ customer: { id: 215000108 } }) },
        { ...movement, account: "215000108" },
      ),
    ).toEqual({ ok: true, movement: { ...movement, account: "215000108" } });
    expect(await ask({ status: 200, body: onRecord }, { ...movement, account: "acct_alice" })).toEqual({
      ok: true,
      movement: { ...movement, account: "acct_alice" },
    });
  });

  it("refuses a transaction Flutterwave does not call successful", async () => {
    expect(await ask({ status: 200, body: verified({ status: "failed" }) })).toEqual({
      ok: false,
      reason: "not_successful",
      message: "Flutterwave says transaction 288200108 is failed, not successful",
    });
  });

  it("refuses a transaction Flutterwave does not know", async () => {
    expect(
      await ask({
        status: 400,
        body: { status: "error", message: "No transaction was found for this id", data: null },
      }),
    ).toMatchObject({ ok: false, reason: "not_found", message: expect.stringContaining("No transaction was found") });
    expect(await ask({ status: 404, body: "Not Found" })).toMatchObject({ ok: false, reason: "not_found" });
  });

  it("reports a refused or missing secret key as configuration, not as the payment's fault", async () => {
    expect(await ask({ status: 401, body: { status: "error", message: "Invalid authorization key" } })).toMatchObject({
      ok: false,
      reason: "not_configured",
      message: expect.stringContaining("Invalid authorization key"),
    });
    expect(await ask({ status: 200, body: verified() }, movement, { apiBaseUrl: baseUrl })).toMatchObject({
      ok: false,
      reason: "not_configured",
      message: expect.stringContaining("settings.secretKey"),
    });
    expect(seen).toHaveLength(0);
    expect(
      await ask({ status: 200, body: verified() }, movement, { secretKey: "k", apiBaseUrl: "http://api.example.com" }),
    ).toMatchObject({ ok: false, reason: "not_configured", message: expect.stringContaining("must be https") });
  });

  it("throws, for a retry, on outages: 5xx, 429, a timeout, a refused connection", async () => {
    await expect(ask({ status: 503, body: { status: "error" } })).rejects.toThrow("HTTP 503; retry later");
    await expect(ask({ status: 429, body: {} })).rejects.toThrow("HTTP 429");
    await expect(ask({ status: 200, body: verified(), delayMs: 1000 })).rejects.toThrow("unreachable");
    await expect(confirm(movement, { secretKey: "k", apiBaseUrl: "http://127.0.0.1:1" })).rejects.toThrow(
      "unreachable",
    );
  });

  it("needs the transaction id the parser put in lookupId", async () => {
    const { lookupId: _, ...without } = movement;
    expect(await ask({ status: 200, body: verified() }, without)).toMatchObject({
      ok: false,
      reason: "not_found",
      message: expect.stringContaining("carries no Flutterwave transaction id"),
    });
  });
});
