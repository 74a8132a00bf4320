// Crashes and replicas with real worker processes: killed with SIGKILL, several at once.
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
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
    balance:
      (await prisma.balance.findFirst({ where: { account: { tenantId: tenant.id, code: `customer:${reference}` } } }))
        ?.amount ?? 0n,
  };
}

const STALE_MS = 1500;
const SWEEP_MS = 500;
const sweeping = { TALLY_STALE_CLAIM_MS: String(STALE_MS), TALLY_SWEEP_INTERVAL_MS: String(SWEEP_MS) };

describe("a worker killed mid-flight", () => {
  it("between the ledger write and the commit leaves nothing written; the sweep then completes it unattended", async () => {
    const reference = `pi_crash_${Date.now()}`;
    expect(
      (await deliver(stripeRequest(tenant, aStripePayment({ reference, amount: 1999n, account: reference })))).status,
    ).toBe(200);

    const doomed = worker({ TALLY_FAULT_PAUSE_AT: "after-ledger-write", TALLY_SWEEP_INTERVAL_MS: "3600000" });
    await doomed.waitFor("fault.paused");
    const { signal } = await doomed.kill("SIGKILL");
    expect(signal).toBe("SIGKILL");

    const after = await state(reference);
    expect(after).toMatchObject({ postings: 0, entries: 0, outbox: 0, balance: 0n });
    expect(after.claim).toMatchObject({ status: "CLAIMED", doneAt: null });
    expect(after.claim!.claimedAt).not.toBeNull();

    const killedAt = Date.now();
    worker(sweeping);
    const done = await until("the posting", async () => (await state(reference)).postings === 1, 20_000);
    const elapsed = Date.now() - killedAt;
    // The claim goes stale STALE_MS after it was taken; the next sweep (every SWEEP_MS) releases it.
    expect(elapsed).toBeLessThan(STALE_MS + 2 * SWEEP_MS + 3000);
    const final = await state(reference);
    expect(final).toMatchObject({ postings: 1, entries: 2, outbox: 1, balance: -1999n });
    expect(final.claim).toMatchObject({ status: "DONE" });
    expect(final.claim!.claimVersion).toBeGreaterThan(after.claim!.claimVersion);
    await until("the receipt", async () => receiptsFor(reference).length === 1, 10_000);
    console.log(
      `crash after ledger write: completed ${elapsed} ms after the kill (stale ${STALE_MS} ms, sweep every ${SWEEP_MS} ms; waited ${done.ms} ms)`,
    );
  });

  it("right after claiming is completed by a new worker within the sweep interval", async () => {
    const reference = `pi_claimed_${Date.now()}`;
    expect(
      (await deliver(stripeRequest(tenant, aStripePayment({ reference, amount: 250n, account: reference })))).status,
    ).toBe(200);
    const doomed = worker({ TALLY_FAULT_PAUSE_AT: "after-claim", TALLY_SWEEP_INTERVAL_MS: "3600000" });
    await doomed.waitFor("fault.paused");
    await doomed.kill("SIGKILL");
    expect((await state(reference)).claim).toMatchObject({ status: "CLAIMED" });

    const killedAt = Date.now();
    const rescuer = worker(sweeping);
    await until("the posting", async () => (await state(reference)).postings === 1, 20_000);
    expect(Date.now() - killedAt).toBeLessThan(STALE_MS + 2 * SWEEP_MS + 3000);
    await rescuer.waitFor("sweep.released");
    expect(await state(reference)).toMatchObject({ postings: 1, outbox: 1, balance: -250n });
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
