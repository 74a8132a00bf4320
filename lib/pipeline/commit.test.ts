// The commit: refunds cannot take a payment past its amount (even two at once), and
// a provider whose confirmation API is down is waited for without using up attempts.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { pickUpReceived } from "@/lib/pipeline/claim";
import { commitClaim } from "@/lib/pipeline/commit";
import { config } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { listStuck } from "@/lib/views/stuck-claims";
import { getCase } from "@/lib/cases/cases";
import { aStripePayment, aStripeRefund, aTenant, stripeRequest, webhookRequest } from "@/dev/testing/builders";
import { fileTenant } from "@/dev/testing/file-tenant";
import { drain } from "@/dev/testing/drain";
import { aFlutterwaveCharge, anEndpoint } from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";
import { balanceOf as ledgerBalance } from "@/lib/ledger/accounts";

const tenant = fileTenant();
afterEach(async () => {
  expect(await ledgerViolations()).toEqual([]);
});

const send = async (event: object) => expect((await deliver(stripeRequest(tenant, event))).status).toBe(200);
const balanceOf = (account: string, currency = "JPY") => ledgerBalance(tenant.id, `customer:${account}`, currency);

describe("refunds larger than their payment", () => {
  it("the refund that would pass the payment's amount is held, with the payment and all its refunds in its case", async () => {
    // The demo's day: paid ¥33,109, refunded 16,554 + 33,109 + 33,109 under three refund ids.
    const payment = aStripePayment({ amount: 33_109n, currency: "jpy", account: "acct_over" });
    await send(payment);
    await drain();
    const refunds = [16_554, 33_109, 33_109].map((amount) =>
      aStripeRefund({ payment: payment.data.object.id, amount, currency: "jpy" }),
    );
    // One after another, as the provider sends them: refunds picked up in one batch commit side
    // by side (TALLY_WORKER_COMMIT_CONCURRENCY), and which one takes the payment's lock first is
    // then a race (the two-at-once case is the next test's).
    for (const r of refunds) {
      await send(r);
      await drain();
    }
    const claims = await prisma.processedEvent.findMany({
      where: { tenantId: tenant.id, paymentReference: payment.data.object.id },
      orderBy: { id: "asc" },
    });
    expect(claims.map((c) => c.status)).toEqual(["DONE", "HELD", "HELD"]);
    expect(await balanceOf("acct_over")).toBe(-33_109n + 16_554n);
    const conflicts = await prisma.claimConflict.findMany({
      where: { tenantId: tenant.id, kind: "OVER_REFUND" },
      include: { case: true },
      orderBy: { id: "asc" },
    });
    expect(conflicts.map((c) => c.reference)).toEqual(refunds.slice(1).map((r) => r.data.object.id));
    expect(conflicts[0]!.claimed).toMatchObject({
      payment: { reference: payment.data.object.id, amount: "33109" },
      refundedSoFar: "16554",
      refunds: [{ amount: "16554", status: "DONE" }],
      withdrawals: [{ kind: "REFUND", amount: "16554", status: "DONE" }],
    });
    const detail = await getCase(tenant.id, conflicts[0]!.case!.id);
    expect(detail!.conflict!.raws).toHaveLength(3); // the payment, the posted refund, the held one
    expect((await prisma.rawEvent.findUniqueOrThrow({ where: { id: claims[1]!.rawEventId } })).status).toBe("CONFLICT");
    expect((await listStuck(tenant.id, 60_000)).filter((s) => s.kind === "conflict")).toHaveLength(2);
  });

  it("two refunds committing at once cannot both fit under the payment", async () => {
    const payment = aStripePayment({ amount: 1000n, currency: "jpy", account: "acct_race" });
    await send(payment);
    await drain();
    for (const amount of [600, 600])
      await send(aStripeRefund({ payment: payment.data.object.id, amount, currency: "jpy" }));
    const picked = await pickUpReceived(10);
    expect(picked.claims).toHaveLength(2);
    const outcomes = await Promise.all(picked.claims.map((c) => commitClaim(c)));
    expect(outcomes.map((o) => o.kind).sort()).toEqual(["held", "posted"]);
    expect(await balanceOf("acct_race")).toBe(-400n);
  });
});

describe("a provider confirmation outage", () => {
  it("waits for the provider without using up attempts, shows it with its age, and posts once the API is back", async () => {
    const flwTenant = await aTenant();
    // A real port with nothing listening: the verify API is down (connection refused).
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const hash = await anEndpoint(flwTenant, "flutterwave", {
      settings: { secretKey: "FLWSECK_TEST-outage", apiBaseUrl: `http://127.0.0.1:${port}` },
    });
    const event = aFlutterwaveCharge({ id: 4242, amount: "150.00", currency: "NGN", account: "acct_wait" });
    expect(
      (await deliver(webhookRequest(flwTenant.slug, "flutterwave", JSON.stringify(event), { "verif-hash": hash })))
        .status,
    ).toBe(200);
    const claimOf = () =>
      prisma.processedEvent.findFirstOrThrow({
        where: { tenantId: flwTenant.id, providerReference: event.data.flw_ref },
      });

    // More rounds than TALLY_MAX_ATTEMPTS, each retried at once: an outage of any length.
    for (let round = 0; round < config().TALLY_MAX_ATTEMPTS + 3; round++) {
      await drain();
      await prisma.processedEvent.updateMany({
        where: { tenantId: flwTenant.id, status: "CLAIMED", claimedAt: null },
        data: { retryAt: new Date() },
      });
    }
    const waiting = await claimOf();
    expect(waiting).toMatchObject({
      status: "CLAIMED",
      claimedAt: null,
      attempts: 0,
      lastError: expect.stringContaining("waiting for provider"),
    });
    expect(waiting.providerWaitSince).not.toBeNull();
    expect(await listStuck(flwTenant.id, 60_000)).toEqual([
      expect.objectContaining({
        kind: "provider_wait",
        reference: event.data.flw_ref,
        claimedAt: waiting.providerWaitSince,
      }),
    ]);

    // The API comes back on the same port.
    const server: Server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          status: "success",
          data: {
            id: 4242,
            flw_ref: event.data.flw_ref,
            tx_ref: event.data.tx_ref,
            amount: 150,
            currency: "NGN",
            status: "successful",
            meta: { account: "acct_wait" },
          },
        }),
      );
    });
    await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    try {
      await prisma.processedEvent.updateMany({
        where: { tenantId: flwTenant.id, status: "CLAIMED", claimedAt: null },
        data: { retryAt: new Date() },
      });
      await drain();
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
    expect(await claimOf()).toMatchObject({ status: "DONE", providerWaitSince: null });
    expect(
      await prisma.posting.count({ where: { tenantId: flwTenant.id, providerReference: event.data.flw_ref } }),
    ).toBe(1);
  });
});
