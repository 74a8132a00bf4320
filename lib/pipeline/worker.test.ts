import { afterEach, describe, expect, it } from "vitest";
import { pickUpReceived, takeReleasedClaims } from "@/lib/pipeline/claim";
import { commitClaim } from "@/lib/pipeline/commit";
import { Prisma, prisma } from "@/lib/platform/db";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { dispatchOutbox } from "@/lib/pipeline/outbox";
import { sweepStaleClaims } from "@/lib/pipeline/sweep";
import {
  aStandardPayment,
  aStripeChargeFor,
  aStripePayment,
  aStripeRefund,
  aTenant,
  standardHeaders,
  stripeRequest,
  webhookRequest,
  type TestTenant,
} from "@/dev/testing/builders";
import { fileTenant } from "@/dev/testing/file-tenant";
import { drain, memoryTransport, silent } from "@/dev/testing/drain";
import { processOnce } from "@/lib/pipeline/worker";
import { reprocessEvent } from "@/lib/pipeline/reprocess";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { deliver } from "@/dev/testing/route";
import { balanceOf as ledgerBalance } from "@/lib/ledger/accounts";

const tenant = fileTenant();
/** Raw events whose place in the queue disagrees with their status: queued but not RECEIVED, or RECEIVED but not queued. */
const queueMismatches = () =>
  prisma.$queryRaw<{ id: bigint; status: string | null }[]>(Prisma.sql`
  SELECT coalesce(r.id, q.raw_event_id) AS id, r.status::text AS status
  FROM raw_event_queue q FULL JOIN (SELECT id, status FROM raw_events WHERE status = 'RECEIVED') r ON r.id = q.raw_event_id
  WHERE q.raw_event_id IS NULL OR r.id IS NULL`);

afterEach(async () => {
  expect(await ledgerViolations()).toEqual([]);
  expect(await queueMismatches()).toEqual([]);
});

const postingsFor = (t: TestTenant, reference: string) =>
  prisma.posting.findMany({
    where: { tenantId: t.id, providerReference: reference },
    include: { entries: true, outbox: true },
  });
const balanceOf = async (t: TestTenant, account: string, currency = "USD") => {
  return ledgerBalance(t.id, `customer:${account}`, currency);
};
async function send(t: TestTenant, event: object | string): Promise<void> {
  const res = await deliver(stripeRequest(t, event));
  expect(res.status).toBe(200);
}

describe("the worker", () => {
  it("posts a payment as one balanced posting, one balance change and one queued receipt", async () => {
    const payment = aStripePayment({ amount: 1250n, account: "acct_first" });
    await send(tenant, payment);
    const transport = memoryTransport();
    await drain(transport);
    const [posting, ...others] = await postingsFor(tenant, payment.data.object.id);
    expect(others).toEqual([]);
    expect(posting!.kind).toBe("PAYMENT");
    expect(posting!.entries.map((e) => e.amount).sort()).toEqual([-1250n, 1250n]);
    expect(await balanceOf(tenant, "acct_first")).toBe(-1250n); // credit-normal: we owe the customer 12.50
    expect(transport.delivered.filter((d) => d.payload.reference === payment.data.object.id)).toHaveLength(1);
    const raw = await prisma.rawEvent.findFirstOrThrow({ where: { tenantId: tenant.id }, orderBy: { id: "desc" } });
    expect(raw).toMatchObject({ status: "DONE", eventType: "payment_intent.succeeded" });
    expect((await prisma.outboxMessage.findFirstOrThrow({ where: { postingId: posting!.id } })).sentAt).not.toBeNull();
  });

  it("ten concurrent deliveries of one payment, claimed by concurrent pick-ups, post once", async () => {
    const payment = aStripePayment({ amount: 700n, account: "acct_ten" });
    const responses = await Promise.all(Array.from({ length: 10 }, () => deliver(stripeRequest(tenant, payment))));
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    // Ten pick-ups racing, each in its own transaction and connection, batch size 1.
    const results = await Promise.all(Array.from({ length: 10 }, () => pickUpReceived(1)));
    const claims = results.flatMap((r) => r.claims);
    expect(claims).toHaveLength(1);
    expect(results.reduce((n, r) => n + r.duplicates, 0)).toBe(9);
    expect((await commitClaim(claims[0]!)).kind).toBe("posted");
    await drain();
    expect(await postingsFor(tenant, payment.data.object.id)).toHaveLength(1);
    expect(await balanceOf(tenant, "acct_ten")).toBe(-700n);
    const raws = await prisma.rawEvent.findMany({ where: { tenantId: tenant.id, status: "DUPLICATE" } });
    expect(raws.length).toBeGreaterThanOrEqual(9);
    expect(new Set(raws.map((r) => r.duplicateOfId)).size).toBe(1);
  });

  it('reformatted retries (field order, null→"", number→string) and a second event type post once', async () => {
    const payment = aStripePayment({ amount: 4200n, account: "acct_reformat" });
    const pi = payment.data.object as Record<string, unknown>;
    const reordered = {
      data: { object: Object.fromEntries(Object.entries(pi).reverse()) },
      created: payment.created,
      type: payment.type,
      id: payment.id,
      object: "event",
    };
    const stringly = { ...payment, data: { object: { ...pi, amount: "4200", amount_received: "4200", customer: "" } } };
    const pretty = JSON.stringify(payment, null, 2);
    for (const e of [payment, reordered, stringly, pretty, aStripeChargeFor(payment)]) await send(tenant, e);
    await drain();
    expect(await postingsFor(tenant, pi.id as string)).toHaveLength(1);
    expect(await balanceOf(tenant, "acct_reformat")).toBe(-4200n);
  });

  it("the same reference under two tenants is two payments", async () => {
    const other = await aTenant();
    const payment = aStripePayment({ reference: "pi_shared_reference", amount: 300n, account: "acct_same" });
    await send(tenant, payment);
    await send(other, payment);
    await drain();
    expect(await postingsFor(tenant, "pi_shared_reference")).toHaveLength(1);
    expect(await postingsFor(other, "pi_shared_reference")).toHaveLength(1);
    expect(await balanceOf(other, "acct_same")).toBe(-300n);
  });

  it("a Standard Webhooks payment and its number-as-string retry post once", async () => {
    const p = aStandardPayment({ amount: 990, account: "acct_std" });
    for (const body of [JSON.stringify(p), JSON.stringify({ ...p, data: { ...p.data, amount: "990" } })]) {
      expect(
        (await deliver(webhookRequest(tenant.slug, "standard", body, standardHeaders(body, tenant.standardSecret))))
          .status,
      ).toBe(200);
    }
    await drain();
    expect(
      await prisma.rawEvent.findMany({
        where: { tenantId: tenant.id, provider: "standard" },
        select: { status: true, lastError: true },
        orderBy: { id: "asc" },
      }),
    ).toEqual([
      { status: "DONE", lastError: null },
      { status: "DUPLICATE", lastError: null },
    ]);
    expect(await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: p.data.id } })).toBe(1);
    expect(await balanceOf(tenant, "acct_std", "EUR")).toBe(-990n);
  });

  it("a refund that arrives before its payment waits for it, then debits the payment's account", async () => {
    const payment = aStripePayment({ amount: 2000n, account: "acct_refund" });
    const refund = aStripeRefund({ payment: payment.data.object.id, amount: 500 });
    await send(tenant, refund);
    await drain();
    const claim = await prisma.processedEvent.findFirstOrThrow({ where: { providerReference: refund.data.object.id } });
    expect(claim).toMatchObject({
      status: "CLAIMED",
      claimedAt: null,
      waitingFor: payment.data.object.id,
      lastError: expect.stringContaining("is not posted yet"),
    });
    expect(claim.retryAt!.getTime()).toBeGreaterThan(Date.now());
    // The payment's commit wakes the refund: no back-off to sit out, the same drain posts both.
    await send(tenant, payment);
    await drain();
    expect(await postingsFor(tenant, refund.data.object.id)).toHaveLength(1);
    expect(await balanceOf(tenant, "acct_refund")).toBe(-1500n);
    expect(await prisma.processedEvent.findUniqueOrThrow({ where: { id: claim.id } })).toMatchObject({
      status: "DONE",
      waitingFor: null,
    });
  });

  it("a refund released to wait while its payment commits at that very moment is always woken", async () => {
    const pairs = Array.from({ length: 30 }, (_, i) => {
      const payment = aStripePayment({ amount: 1000n + BigInt(i), account: `acct_race_${i}` });
      return { payment, refund: aStripeRefund({ payment: payment.data.object.id, amount: 100 }) };
    });
    for (const { payment, refund } of pairs) {
      await send(tenant, refund);
      await send(tenant, payment);
    }
    const { claims } = await pickUpReceived(100);
    expect(claims).toHaveLength(60);
    // Every payment's commit races its refund's attempt, on separate connections.
    await Promise.all(claims.map((c) => commitClaim(c)));
    const refunds = await prisma.processedEvent.findMany({
      where: { providerReference: { in: pairs.map((p) => p.refund.data.object.id) } },
    });
    for (const r of refunds) {
      // Posted already, or waiting with its retry due now: never left for the slow recheck.
      if (r.status !== "DONE") expect(r.retryAt!.getTime()).toBeLessThanOrEqual(Date.now());
    }
    await drain();
    for (const { refund } of pairs) expect(await postingsFor(tenant, refund.data.object.id)).toHaveLength(1);
  });

  it("a refund whose payment comes late does not give up: waiting uses no attempts", async () => {
    const payment = aStripePayment({ amount: 3000n, account: "acct_late" });
    const refund = aStripeRefund({ payment: payment.data.object.id, amount: 1000 });
    await send(tenant, refund);
    await drain();
    const claim = await prisma.processedEvent.findFirstOrThrow({ where: { providerReference: refund.data.object.id } });
    // It looks again far more often than the attempt limit (10) allows for failures.
    for (let look = 0; look < 30; look++) {
      await prisma.$executeRaw(Prisma.sql`UPDATE processed_events SET retry_at = now() WHERE id = ${claim.id}`);
      await drain();
    }
    expect(await prisma.processedEvent.findUniqueOrThrow({ where: { id: claim.id } })).toMatchObject({
      status: "CLAIMED",
      claimedAt: null,
      attempts: 0,
    });
    await send(tenant, payment);
    await drain();
    expect(await postingsFor(tenant, refund.data.object.id)).toHaveLength(1);
    expect(await balanceOf(tenant, "acct_late")).toBe(-2000n);
  });

  it("queues each stored event, takes it off with its outcome, and queues it again when it is sent back to be parsed", async () => {
    const queued = (id: bigint) => prisma.rawEventQueue.count({ where: { rawEventId: id } });
    await send(tenant, "{ still not json");
    const raw = await prisma.rawEvent.findFirstOrThrow({ where: { tenantId: tenant.id }, orderBy: { id: "desc" } });
    expect(await queued(raw.id)).toBe(1);
    await drain();
    expect(await prisma.rawEvent.findUniqueOrThrow({ where: { id: raw.id } })).toMatchObject({ status: "FAILED" });
    expect(await queued(raw.id)).toBe(0);
    const again = await reprocessEvent(tenant.id, raw.id, SYSTEM_ACTOR, "parser fixed", 60_000);
    expect(again.ok).toBe(true);
    expect(await queued(raw.id)).toBe(1);
    expect(await queueMismatches()).toEqual([]);
    await drain();
    expect(await queued(raw.id)).toBe(0);
  });

  it("keeps an unparseable event as FAILED with the parser's error, and ignores events that move no money", async () => {
    await send(tenant, "{ not json");
    await send(tenant, { id: "evt_c", type: "customer.created", created: 1, data: { object: { id: "cus_1" } } });
    await send(tenant, {
      id: "evt_bad",
      type: "payment_intent.succeeded",
      created: 1,
      data: { object: { id: "pi_bad", amount_received: 12.5, currency: "usd" } },
    });
    await drain();
    const rows = await prisma.rawEvent.findMany({ where: { tenantId: tenant.id }, orderBy: { id: "desc" }, take: 3 });
    expect(rows[0]).toMatchObject({
      status: "FAILED",
      lastError: expect.stringContaining("amount_received: amount must be an integer number of minor units, got 12.5"),
    });
    expect(rows[1]).toMatchObject({
      status: "IGNORED",
      eventType: "customer.created",
      note: "event type moves no money",
    });
    expect(rows[2]).toMatchObject({ status: "FAILED", lastError: expect.stringContaining("body is not valid JSON") });
  });

  it("a swept slow worker cannot commit after the new owner took the claim (fencing token)", async () => {
    const payment = aStripePayment({ amount: 800n, account: "acct_fence" });
    await send(tenant, payment);
    const [slow] = (await pickUpReceived(50)).claims.filter((c) => c.reference === payment.data.object.id);
    expect(slow).toBeDefined();
    const swept = await sweepStaleClaims(0);
    expect(swept!.released.map((r) => r.id)).toContain(slow!.claimId);
    const [fresh] = (await takeReleasedClaims(50)).filter((c) => c.claimId === slow!.claimId);
    expect(fresh!.version).toBeGreaterThan(slow!.version);
    expect(await commitClaim(slow!)).toEqual({ kind: "fenced" });
    expect(await postingsFor(tenant, payment.data.object.id)).toHaveLength(0);
    expect((await commitClaim(fresh!)).kind).toBe("posted");
    expect(await commitClaim(slow!)).toEqual({ kind: "fenced" });
    expect(await postingsFor(tenant, payment.data.object.id)).toHaveLength(1);
  });

  it("gives up after the attempt limit: the claim and its event become FAILED, shown as stuck", async () => {
    const payment = aStripePayment({ amount: 100n, account: "acct_stuck" });
    await send(tenant, payment);
    const [claim] = (await pickUpReceived(50)).claims.filter((c) => c.reference === payment.data.object.id);
    await prisma.processedEvent.update({ where: { id: claim!.claimId }, data: { attempts: 10 } });
    const swept = await sweepStaleClaims(0);
    expect(swept!.released.find((r) => r.id === claim!.claimId)).toMatchObject({ failed: true });
    expect(await prisma.processedEvent.findUniqueOrThrow({ where: { id: claim!.claimId } })).toMatchObject({
      status: "FAILED",
    });
    expect(await prisma.rawEvent.findUniqueOrThrow({ where: { id: claim!.rawEventId } })).toMatchObject({
      status: "FAILED",
      lastError: expect.stringContaining("gave up after 10 attempts"),
    });
  });

  it("only one sweeper runs at a time across replicas: a second one, arriving while the first is inside, steps aside", async () => {
    const payment = aStripePayment({ amount: 100n, account: "acct_two_sweepers" });
    await send(tenant, payment);
    const [claim] = (await pickUpReceived(1)).claims;
    // Two sweepers on their own connections, really overlapping: the first is held inside its
    // critical section (lock taken, nothing released yet) until the second has run to its end.
    let inside!: () => void;
    const firstIsInside = new Promise<void>((r) => (inside = r));
    let letGo!: () => void;
    const secondDone = new Promise<void>((r) => (letGo = r));
    const first = sweepStaleClaims(0, async () => {
      inside();
      await secondDone;
    });
    await firstIsInside;
    const second = await sweepStaleClaims(0).finally(letGo);
    const firstResult = await first;
    expect(second).toBeNull();
    expect(firstResult!.released.map((r) => r.id)).toContain(claim!.claimId);
    // Released once: one new fencing token, not two.
    expect(await prisma.processedEvent.findUniqueOrThrow({ where: { id: claim!.claimId } })).toMatchObject({
      claimVersion: claim!.version + 1,
      claimedAt: null,
    });
    await drain();
  });

  it("delivers each receipt after commit, retrying a failing transport with back-off", async () => {
    const payment = aStripePayment({ amount: 555n, account: "acct_receipt" });
    await send(tenant, payment);
    while ((await processOnce(silent)) > 0);
    const failing = {
      name: "down",
      send: async () => {
        throw new Error("SMTP 421 try later");
      },
    };
    const first = await dispatchOutbox(failing);
    expect(first.failed).toBeGreaterThan(0);
    const row = await prisma.outboxMessage.findFirstOrThrow({
      where: { posting: { providerReference: payment.data.object.id } },
    });
    expect(row).toMatchObject({ sentAt: null, attempts: 1, lastError: "SMTP 421 try later" });
    expect(row.availableAt.getTime()).toBeGreaterThan(Date.now() + 1000);
    const working = memoryTransport();
    expect((await dispatchOutbox(working)).leased).toBe(0); // backing off
    await prisma.outboxMessage.updateMany({ where: { sentAt: null }, data: { availableAt: new Date() } });
    await dispatchOutbox(working, 1000);
    expect(working.delivered.filter((d) => d.outboxId === row.id)).toHaveLength(1);
    expect(await prisma.outboxMessage.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({
      attempts: 2,
      sentAt: expect.any(Date),
    });
  });
});
