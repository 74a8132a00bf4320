// Crashes and replicas with real worker processes: killed with SIGKILL, several at once.
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { balanceOf as ledgerBalance } from "@/lib/ledger/accounts";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { aStripePayment, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { deliver } from "@/dev/testing/route";
import { startWorkerProcess, type WorkerProcess } from "@/dev/testing/worker-process";

let tenant: TestTenant;
const running: WorkerProcess[] = [];
const receiptsFile = path.join(mkdtempSync(path.join(os.tmpdir(), "tally-receipts-")), "receipts.ndjson");
const worker = (env: Record<string, string> = {}) => {
  const w = startWorkerProcess({ TALLY_RECEIPTS_FILE: receiptsFile, ...env });
  running.push(w);
  return w;
};
const receiptsFor = (reference: string) =>
  existsSync(receiptsFile)
    ? readFileSync(receiptsFile, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((r) => r.reference === reference)
    : [];

beforeAll(async () => {
  tenant = await aTenant();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.kill("SIGKILL")));
  expect(await ledgerViolations()).toEqual([]);
});

async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const value = await probe();
    if (value) return { value, ms: Date.now() - started };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms`);
}

async function state(reference: string) {
  const claim = await prisma.processedEvent.findFirst({ where: { tenantId: tenant.id, providerReference: reference } });
  return {
    claim,
    postings: await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: reference } }),
    entries: await prisma.ledgerEntry.count({
      where: { posting: { tenantId: tenant.id, providerReference: reference } },
    }),
    outbox: await prisma.outboxMessage.count({ where: { posting: { providerReference: reference } } }),
    balance: await ledgerBalance(tenant.id, `customer:${reference}`, "USD"),
  };
}

const STALE_MS = 1500;
const SWEEP_MS = 500;
const sweeping = { TALLY_STALE_CLAIM_MS: String(STALE_MS), TALLY_SWEEP_INTERVAL_MS: String(SWEEP_MS) };

// The rescuer runs before the kill (its start-up, seconds under load, is not what is
// measured) and never sweeps: only the dead holder's lock can hand it the claims.
const noSweep = { TALLY_STALE_CLAIM_MS: "3600000", TALLY_SWEEP_INTERVAL_MS: "3600000" };
const TAKE_OVER_WITHIN_MS = 3000; // a 100 ms poll, plus a commit on a loaded machine

// Payments are posted in the pick-up's own transaction (commitInPickUp); these tests
// stand the worker between a committed claim and its commit, the path every refund,
// dispute, released claim and confirmed provider takes, so they turn that off.
const commitStep = { TALLY_WORKER_COMMIT_IN_PICKUP: "0" };

describe("a worker killed mid-flight", () => {
  it("inside the pick-up that claims and posts leaves nothing, not even the claim: the next pick-up posts it once, with no take-over", async () => {
    const references = Array.from({ length: 6 }, (_, i) => `pi_inpickup_${Date.now()}_${i}`);
    for (const [i, reference] of references.entries())
      expect(
        (
          await deliver(
            stripeRequest(tenant, aStripePayment({ reference, amount: 300n + BigInt(i), account: reference })),
          )
        ).status,
      ).toBe(200);
    const doomed = worker({ TALLY_FAULT_PAUSE_AT: "after-ledger-write", ...noSweep });
    await doomed.waitFor("fault.paused");
    const rescuer = worker(noSweep);
    await rescuer.waitFor("worker.ready");
    // Paused before COMMIT: its claims, postings and DONE marks are not visible; the events
    // are locked by the doomed pick-up (SKIP LOCKED), so the rescuer cannot take them yet.
    for (const reference of references)
      expect(await state(reference)).toMatchObject({ claim: null, postings: 0, outbox: 0, balance: 0n });
    await doomed.kill("SIGKILL");
    const done = await until(
      "every posting",
      async () => {
        for (const r of references) if ((await state(r)).postings !== 1) return false;
        return true;
      },
      20_000,
    );
    expect(done.ms).toBeLessThan(TAKE_OVER_WITHIN_MS);
    for (const [i, reference] of references.entries()) {
      const s = await state(reference);
      expect(s).toMatchObject({ postings: 1, entries: 2, outbox: 1, balance: -(300n + BigInt(i)) });
      // The rescuer's own claim, won fresh: nothing to take over, no attempt spent by the kill.
      expect(s.claim).toMatchObject({ status: "DONE", claimVersion: 1, attempts: 1 });
      const raw = await prisma.rawEvent.findFirst({
        where: { tenantId: tenant.id, movementReferences: { has: reference } },
      });
      expect(raw).toMatchObject({ status: "DONE", attempts: 1 });
    }
    expect(rescuer.lines.map((l) => l.event)).not.toContain("claims.taken_over");
    for (const reference of references)
      await until(`the receipt of ${reference}`, async () => receiptsFor(reference).length === 1, 10_000);
  });

  it("between the ledger write and the commit leaves nothing written; a live worker takes the claim over at once, without the sweep", async () => {
    const reference = `pi_crash_${Date.now()}`;
    expect(
      (await deliver(stripeRequest(tenant, aStripePayment({ reference, amount: 1999n, account: reference })))).status,
    ).toBe(200);

    const doomed = worker({ TALLY_FAULT_PAUSE_AT: "after-ledger-write", ...noSweep, ...commitStep });
    await doomed.waitFor("fault.paused");
    const rescuer = worker(noSweep);
    await rescuer.waitFor("worker.ready");
    // Alive, the doomed worker's claim is its own: not taken over.
    expect((await state(reference)).claim).toMatchObject({ status: "CLAIMED", doneAt: null });
    const { signal } = await doomed.kill("SIGKILL");
    expect(signal).toBe("SIGKILL");
    const killedAt = Date.now();

    const done = await until("the posting", async () => (await state(reference)).postings === 1, 20_000);
    expect(done.ms).toBeLessThan(TAKE_OVER_WITHIN_MS);
    const final = await state(reference);
    expect(final).toMatchObject({ postings: 1, entries: 2, outbox: 1, balance: -1999n });
    expect(final.claim).toMatchObject({ status: "DONE" });
    expect(final.claim!.claimVersion).toBe(2);
    expect(rescuer.lines.map((l) => l.event)).toContain("claims.taken_over");
    expect(rescuer.lines.map((l) => l.event)).not.toContain("sweep.released");
    await until("the receipt", async () => receiptsFor(reference).length === 1, 10_000);
    console.log(`crash after ledger write: taken over and posted ${Date.now() - killedAt} ms after the kill`);
  });

  it("right after claiming is completed by a live worker at once, without the sweep", async () => {
    const reference = `pi_claimed_${Date.now()}`;
    expect(
      (await deliver(stripeRequest(tenant, aStripePayment({ reference, amount: 250n, account: reference })))).status,
    ).toBe(200);
    const doomed = worker({ TALLY_FAULT_PAUSE_AT: "after-claim", ...noSweep });
    await doomed.waitFor("fault.paused");
    const rescuer = worker(noSweep);
    await rescuer.waitFor("worker.ready");
    expect((await state(reference)).claim).toMatchObject({ status: "CLAIMED" });
    await doomed.kill("SIGKILL");
    const done = await until("the posting", async () => (await state(reference)).postings === 1, 20_000);
    expect(done.ms).toBeLessThan(TAKE_OVER_WITHIN_MS);
    await rescuer.waitFor("claims.taken_over");
    expect(await state(reference)).toMatchObject({ postings: 1, outbox: 1, balance: -250n });
  });

  it("a whole batch killed mid-transaction leaves none of it written, and is taken over and posted at once", async () => {
    const references = Array.from({ length: 6 }, (_, i) => `pi_batch_${Date.now()}_${i}`);
    for (const [i, reference] of references.entries())
      expect(
        (
          await deliver(
            stripeRequest(tenant, aStripePayment({ reference, amount: 100n + BigInt(i), account: reference })),
          )
        ).status,
      ).toBe(200);
    const doomed = worker({ TALLY_FAULT_PAUSE_AT: "after-ledger-write", ...noSweep, ...commitStep });
    await doomed.waitFor("fault.paused");
    const rescuer = worker(noSweep);
    await rescuer.waitFor("worker.ready");
    await doomed.kill("SIGKILL");
    // The batch's postings were written inside its one transaction: the kill rolled all of them back.
    for (const reference of references)
      expect(await state(reference)).toMatchObject({ postings: 0, entries: 0, outbox: 0, balance: 0n });
    const done = await until(
      "every posting",
      async () => {
        for (const r of references) if ((await state(r)).postings !== 1) return false;
        return true;
      },
      20_000,
    );
    expect(done.ms).toBeLessThan(TAKE_OVER_WITHIN_MS);
    for (const [i, reference] of references.entries()) {
      const s = await state(reference);
      expect(s).toMatchObject({ postings: 1, entries: 2, outbox: 1, balance: -(100n + BigInt(i)) });
      expect(s.claim).toMatchObject({ status: "DONE", claimVersion: 2 });
    }
    for (const reference of references)
      await until(`the receipt of ${reference}`, async () => receiptsFor(reference).length === 1, 10_000);
  });

  it("a worker alive but stuck keeps its claim from take-over; the sweep releases it once stale", async () => {
    const reference = `pi_stuck_${Date.now()}`;
    expect(
      (await deliver(stripeRequest(tenant, aStripePayment({ reference, amount: 777n, account: reference })))).status,
    ).toBe(200);
    const stuck = worker({ TALLY_FAULT_PAUSE_AT: "after-claim", ...noSweep });
    await stuck.waitFor("fault.paused");
    const pausedAt = Date.now();
    const rescuer = worker(sweeping);
    await rescuer.waitFor("worker.start", 60_000); // its start-up is not what is measured
    await until("the posting", async () => (await state(reference)).postings === 1, 20_000);
    // Not before the claim went stale: its holder was alive, so only the sweep could release it.
    expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(STALE_MS);
    await rescuer.waitFor("sweep.released");
    expect(rescuer.lines.map((l) => l.event)).not.toContain("claims.taken_over");
    expect(await state(reference)).toMatchObject({ postings: 1, outbox: 1, balance: -777n });
  });
});

describe("several worker replicas", () => {
  it("ten concurrent deliveries of one payment, worked by three replicas at once, post once and send one receipt", async () => {
    const reference = `pi_replicas_${Date.now()}`;
    const payment = aStripePayment({ reference, amount: 4321n, account: reference });
    const responses = await Promise.all(Array.from({ length: 10 }, () => deliver(stripeRequest(tenant, payment))));
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    const replicas = [worker(), worker(), worker()];
    await until(
      "all ten deliveries handled",
      async () =>
        (await prisma.rawEvent.count({ where: { tenantId: tenant.id, status: { in: ["RECEIVED", "CLAIMED"] } } })) ===
        0,
      30_000,
    );
    await until("the receipt", async () => receiptsFor(reference).length >= 1, 10_000);
    expect(await state(reference)).toMatchObject({ postings: 1, entries: 2, outbox: 1, balance: -4321n });
    expect(
      await prisma.rawEvent.count({
        where: {
          tenantId: tenant.id,
          status: "DUPLICATE",
          duplicateOf: { claims: { some: { providerReference: reference } } },
        },
      }),
    ).toBe(9);
    expect(receiptsFor(reference)).toHaveLength(1);
    expect(replicas.every((r) => r.child.exitCode === null)).toBe(true);
  });

  it("stops gracefully on SIGTERM", async () => {
    const w = worker();
    await w.waitFor("worker.start");
    const exit = await w.kill("SIGTERM");
    expect(exit).toEqual({ code: 0, signal: null });
    expect(w.lines.map((l) => l.event)).toContain("worker.stop");
  });
});
