// Flutterwave's webhooks are authenticated by a static shared hash, so the
// worker confirms each payment through Flutterwave's verify API before posting.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { aTenant, webhookRequest, type TestTenant } from "@/dev/testing/builders";
import { drain } from "@/dev/testing/drain";
import { aFlutterwaveCharge, anEndpoint } from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";

let tenant: TestTenant;
let hash: string;
let server: Server;
let answer: (id: string) => { status: number; body: unknown };

beforeAll(async () => {
  server = createServer((req, res) => {
    const id = /\/v3\/transactions\/(\d+)\/verify/.exec(req.url ?? "")?.[1] ?? "";
    const a = answer(id);
    res.writeHead(a.status, { "content-type": "application/json" }).end(JSON.stringify(a.body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  tenant = await aTenant();
  hash = await anEndpoint(tenant, "flutterwave", {
    settings: {
      secretKey: "FLWSECK_TEST-worker-X",
      apiBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    },
  });
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function send(event: ReturnType<typeof aFlutterwaveCharge>) {
  const res = await deliver(webhookRequest(tenant.slug, "flutterwave", JSON.stringify(event), { "verif-hash": hash }));
  expect(res.status).toBe(200);
  await drain();
  return prisma.processedEvent.findFirstOrThrow({
    where: { tenantId: tenant.id, providerReference: event.data.flw_ref },
  });
}

describe("Flutterwave payments are confirmed with Flutterwave before posting", () => {
  it("posts a payment Flutterwave confirms", async () => {
    const event = aFlutterwaveCharge({ id: 1001, amount: "2500.50", currency: "NGN", account: "acct_fw" });
    answer = () => ({
      status: 200,
      body: {
        status: "success",
        data: {
          id: 1001,
          flw_ref: event.data.flw_ref,
          tx_ref: event.data.tx_ref,
          amount: 2500.5,
          currency: "NGN",
          status: "successful",
          meta: { account: "acct_fw" },
        },
      },
    });
    const claim = await send(event);
    expect(claim.status).toBe("DONE");
    expect(await prisma.posting.count({ where: { providerReference: event.data.flw_ref } })).toBe(1);
  });

  it("credits no one when the webhook names another account than Flutterwave's record", async () => {
    // verif-hash signs nothing: whoever knows it (or replays a delivery) can rewrite meta.account.
    const event = aFlutterwaveCharge({ id: 1004, amount: "700.00", currency: "NGN", account: "acct_mallory" });
    answer = () => ({
      status: 200,
      body: {
        status: "success",
        data: {
          id: 1004,
          flw_ref: event.data.flw_ref,
          amount: 700,
          currency: "NGN",
          status: "successful",
          meta: { account: "acct_alice" },
        },
      },
    });
    const claim = await send(event);
    expect(claim).toMatchObject({
      status: "FAILED",
      lastError: expect.stringContaining("account acct_alice, webhook acct_mallory"),
    });
    expect(await prisma.posting.count({ where: { providerReference: event.data.flw_ref } })).toBe(0);
    expect(await prisma.account.count({ where: { tenantId: tenant.id, code: "customer:acct_mallory" } })).toBe(0);
  });

  it("posts nothing, visibly, when Flutterwave does not know the payment", async () => {
    const event = aFlutterwaveCharge({ id: 1002, amount: 100 });
    answer = () => ({ status: 404, body: { status: "error", message: "No transaction was found for this id" } });
    const claim = await send(event);
    expect(claim).toMatchObject({ status: "FAILED", lastError: expect.stringContaining("did not confirm") });
    expect(await prisma.rawEvent.findUniqueOrThrow({ where: { id: claim.rawEventId } })).toMatchObject({
      status: "FAILED",
    });
    expect(await prisma.posting.count({ where: { providerReference: event.data.flw_ref } })).toBe(0);
  });

  it("retries later, without posting, while Flutterwave's API is down", async () => {
    const event = aFlutterwaveCharge({ id: 1003, amount: 100 });
    answer = () => ({ status: 503, body: { status: "error" } });
    const claim = await send(event);
    expect(claim).toMatchObject({
      status: "CLAIMED",
      claimedAt: null,
      lastError: expect.stringContaining("could not be asked"),
    });
    expect(claim.retryAt!.getTime()).toBeGreaterThan(Date.now());
    expect(await prisma.posting.count({ where: { providerReference: event.data.flw_ref } })).toBe(0);
    expect(await ledgerViolations()).toEqual([]);
  });
});
