// Issue #17, item 1: PayPal signs transmission id|time|webhook id|crc32(body), and
// CRC-32 is not a cryptographic hash. From one captured delivery an attacker builds a
// body with another amount and account and a padding field solved so that its CRC-32
// is the original's: the signature verifies. These tests make that forgery for real,
// then show where it stops: a reused transmission id is refused at the door, and a
// forged body under a fresh one is confirmed with PayPal's API (a real local server
// answering as PayPal) and ends FAILED, crediting no one.
import { crc32 } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { crc32 as ourCrc32 } from "@/lib/providers/paypal/crc32";
import type { PaypalAccounts } from "@/dev/simulator/paypal-api";
import { startPaypalTestServer, type PaypalTestServer } from "@/dev/testing/paypal-server";
import type { SimMovement } from "@/lib/providers/simulation/script";
import { aTenant, unique, webhookRequest, type TestTenant } from "@/dev/testing/builders";
import { withCrc32 } from "@/dev/testing/crc-forgery";
import { drainAll } from "@/dev/testing/drain";
import { aPaypalCapture, anEndpoint, paypalHeaders, type PaypalSigner } from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";

const webhookId = "WH-FORGERY-0123456789";
const app = { clientId: "AV-forgery-client", clientSecret: "EP-forgery-secret" };
let tenant: TestTenant;
let signer: PaypalSigner;
let api: PaypalTestServer;
let paypal: PaypalAccounts;

beforeAll(async () => {
  api = await startPaypalTestServer("forgery-test");
  ({ signer, paypal } = api);
  tenant = await aTenant();
  await anEndpoint(tenant, "paypal", { settings: { webhookId, ...app, apiBaseUrl: api.base } });
});
afterAll(() => api.close());

/** A capture PayPal really made (its API knows it), and the delivery PayPal sent for it. */
function aGenuineCapture(account: string, value: string) {
  const id = unique("CAP").toUpperCase();
  const truth: SimMovement = {
    tenant: tenant.slug,
    provider: "paypal",
    kind: "PAYMENT",
    reference: id,
    account,
    amount: Math.round(Number(value) * 100),
    currency: "USD",
    created: Date.parse("2026-12-02T14:49:58Z") / 1000,
  };
  paypal.add(app.clientId, app.clientSecret, [truth]);
  const body = JSON.stringify(aPaypalCapture({ id, value, customId: account }));
  return { id, body, headers: paypalHeaders(body, signer, { webhookId }) };
}

/** The attacker's body: the captured one with a new amount and account, and a padding field solved to keep its CRC-32. */
function forge(original: string, value: string, account: string): string {
  const event = JSON.parse(original);
  event.resource.amount.value = value;
  event.resource.seller_receivable_breakdown.gross_amount.value = value;
  event.resource.custom_id = account;
  const [head, tail] = JSON.stringify({ ...event, pad: "@PAD@" }).split('"@PAD@"');
  return withCrc32(crc32(Buffer.from(original)) >>> 0, (pad) => `${head}"${pad}"${tail}`);
}

const post = (body: string, headers: Record<string, string>) =>
  deliver(webhookRequest(tenant.slug, "paypal", body, headers));
const customerAccount = (code: string) =>
  prisma.account.findFirst({ where: { tenantId: tenant.id, code: `customer:${code}` } });

describe("a PayPal delivery forged to the same CRC-32", () => {
  it("is a real forgery: another amount and account, the same CRC-32, and the captured signature verifies", async () => {
    const genuine = aGenuineCapture("acct_alice", "30.00");
    const forged = forge(genuine.body, "3000.00", "acct_mallory");
    expect(forged).not.toBe(genuine.body);
    expect(JSON.parse(forged).resource).toMatchObject({ amount: { value: "3000.00" }, custom_id: "acct_mallory" });
    expect(ourCrc32(Buffer.from(forged))).toBe(ourCrc32(Buffer.from(genuine.body)));
    // The door cannot tell: the forged body, under headers PayPal never sent with it, is stored.
    const res = await post(forged, genuine.headers);
    expect(res.status).toBe(200);
  });

  it("ends FAILED, naming amount and account, and credits no one, once PayPal's API is asked", async () => {
    const genuine = aGenuineCapture("acct_bob", "12.50");
    const forged = forge(genuine.body, "9999.00", "acct_mallory");
    expect((await post(forged, genuine.headers)).status).toBe(200);
    await drainAll();
    const claim = await prisma.processedEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, providerReference: genuine.id },
    });
    expect(claim.status).toBe("FAILED");
    expect(claim.lastError).toContain("mismatch");
    expect(claim.lastError).toContain("amount 1250 minor units, webhook 999900");
    expect(claim.lastError).toContain("account acct_bob, webhook acct_mallory");
    expect(await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: genuine.id } })).toBe(0);
    expect(await customerAccount("acct_mallory")).toBeNull();
  });

  it("is refused at the door (401, nothing stored) when its transmission id was already received with the genuine body", async () => {
    const genuine = aGenuineCapture("acct_carol", "45.00");
    expect((await post(genuine.body, genuine.headers)).status).toBe(200);
    const forged = forge(genuine.body, "4500.00", "acct_mallory");
    const count = () => prisma.rawEvent.count({ where: { tenantId: tenant.id, provider: "paypal" } });
    const before = await count();
    const res = await post(forged, genuine.headers);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "transmission_reused",
      message: expect.stringContaining(genuine.headers["paypal-transmission-id"]!),
    });
    expect(await count()).toBe(before);
    // The genuine body sent again under its own transmission is the same delivery: 200, no second row.
    expect((await post(genuine.body, genuine.headers)).status).toBe(200);
    expect(await count()).toBe(before);
    await drainAll();
    const posted = await prisma.posting.findFirstOrThrow({
      where: { tenantId: tenant.id, providerReference: genuine.id },
      include: { entries: { include: { account: true } } },
    });
    expect(posted.entries.map((e) => `${e.account.code} ${e.amount} ${e.currency}`).sort()).toEqual([
      "clearing:paypal 4500 USD",
      "customer:acct_carol -4500 USD",
    ]);
    expect(await customerAccount("acct_mallory")).toBeNull();
  });

  it("ten concurrent sends of one transmission store it once, and a forged body racing them is refused or stored alone, never both", async () => {
    const genuine = aGenuineCapture("acct_dave", "8.00");
    const forged = forge(genuine.body, "800.00", "acct_mallory");
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => post(genuine.body, genuine.headers)),
      post(forged, genuine.headers),
    ]);
    const rows = await prisma.rawEvent.findMany({
      where: { tenantId: tenant.id, deliveryId: genuine.headers["paypal-transmission-id"] },
    });
    expect(rows).toHaveLength(1);
    const winner = Buffer.from(rows[0]!.rawBody!).toString("utf8");
    // Whichever body got there first is the only one stored; every other body under that id is refused.
    for (const [i, res] of answers.entries())
      expect(res.status).toBe((i < 10 ? genuine.body : forged) === winner ? 200 : 401);
    await drainAll();
    expect(await customerAccount("acct_mallory")).toBeNull();
  });
});
