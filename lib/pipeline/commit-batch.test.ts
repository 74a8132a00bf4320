// A pick-up's claims commit in one transaction: members that cannot commit (fenced,
// deferred, held, failing) are rolled back alone and the others commit; a batch
// that fails as a whole is retried member by member.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { pickUpReceived, takeReleasedClaims } from "@/lib/pipeline/claim";
import { releaseClaim } from "@/lib/pipeline/claim-state";
import { commitBatch } from "@/lib/pipeline/commit";
import { processOnce } from "@/lib/pipeline/worker";
import { databaseUrl, Prisma, prisma } from "@/lib/platform/db";
import { HOLDER_LOCK_CLASS } from "@/lib/pipeline/holder";
import { balanceOf } from "@/lib/ledger/accounts";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { aStripePayment, aStripeRefund, stripeRequest } from "@/dev/testing/builders";
import { fileTenant } from "@/dev/testing/file-tenant";
import { drain, drainAll, silent } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";

const tenant = fileTenant();
afterEach(async () => {
  expect(await ledgerViolations()).toEqual([]);
});

const send = async (event: object) => expect((await deliver(stripeRequest(tenant, event))).status).toBe(200);
const customer = (account: string) => balanceOf(tenant.id, `customer:${account}`, "USD");

/**
 * Makes the database refuse the posting of one reference, raising `message`: when it
 * is inserted, or (a deferred constraint trigger) only at COMMIT. Returns the undo.
 */
async function refusePostingOf(
  reference: string,
  message: string,
  when: "at insert" | "at commit",
): Promise<() => Promise<void>> {
  const name = when === "at insert" ? "test_refuse_insert" : "test_refuse_commit";
  await prisma.$executeRawUnsafe(`
    CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.provider_reference = '${reference}' THEN RAISE EXCEPTION '${message} %', NEW.provider_reference; END IF;
      RETURN NEW;
    END $$`);
  await prisma.$executeRawUnsafe(
    when === "at insert"
      ? `CREATE TRIGGER ${name} BEFORE INSERT ON postings FOR EACH ROW EXECUTE FUNCTION ${name}()`
      : `CREATE CONSTRAINT TRIGGER ${name} AFTER INSERT ON postings DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${name}()`,
  );
  return async () => {
    await prisma.$executeRawUnsafe(`DROP TRIGGER ${name} ON postings`);
  };
}
const postingsOf = (reference: string) =>
  prisma.posting.count({ where: { tenantId: tenant.id, providerReference: reference } });
const claimOf = (reference: string) =>
  prisma.processedEvent.findFirstOrThrow({ where: { tenantId: tenant.id, providerReference: reference } });
const payments = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) =>
    aStripePayment({
      amount: 100n + BigInt(i),
      account: `acct_${tag}_${i}`,
      reference: `pi_${tag}_${Date.now()}_${i}`,
    }),
  );
const ref = (p: ReturnType<typeof aStripePayment>) => p.data.object.id;

describe("a batch commit", () => {
  it("writes every member in one transaction and moves the clearing balance once", async () => {
    const batch = payments(5, "one");
    for (const p of batch) await send(p);
    const { claims } = await pickUpReceived(50);
    expect(claims).toHaveLength(5);
    const outcomes = await commitBatch(claims);
    expect(outcomes.map((o) => o.kind)).toEqual(Array(5).fill("posted"));
    // One transaction: now() is its start, so every posting, and the one clearing
    // balance row they moved (once, not five times: no dead versions), carry the same time.
    const started = await prisma.$queryRaw<{ at: Date }[]>(Prisma.sql`
      SELECT DISTINCT created_at AS at FROM postings WHERE provider_reference = ANY(${batch.map(ref)}::text[])`);
    expect(started).toHaveLength(1);
    const clearing = await prisma.$queryRaw<{ at: Date; amount: bigint }[]>(Prisma.sql`
      SELECT b.updated_at AS at, b.amount FROM balances b JOIN accounts a ON a.id = b.account_id
      WHERE a.tenant_id = ${tenant.id}::uuid AND a.code = 'clearing:stripe'`);
    expect(clearing).toEqual([{ at: started[0]!.at, amount: 510n }]);
    for (const [i, p] of batch.entries()) expect(await customer(`acct_one_${i}`)).toBe(-(100n + BigInt(i)));
  });

  it("a fenced member is left to its new owner; the others commit", async () => {
    const batch = payments(3, "fenced");
    for (const p of batch) await send(p);
    const { claims } = await pickUpReceived(50);
    // Another worker takes the middle claim over (released, then taken: a new fencing token).
    expect(await releaseClaim(claims[1]!, "test: taken over", 0)).not.toBeNull();
    const taken = await takeReleasedClaims();
    expect(taken.map((c) => c.claimId)).toEqual([claims[1]!.claimId]);
    const outcomes = await commitBatch(claims);
    expect(outcomes.map((o) => o.kind)).toEqual(["posted", "fenced", "posted"]);
    expect(await postingsOf(ref(batch[1]!))).toBe(0);
    expect((await commitBatch(taken)).map((o) => o.kind)).toEqual(["posted"]);
    for (const p of batch) expect(await postingsOf(ref(p))).toBe(1);
    expect(await customer("acct_fenced_1")).toBe(-101n);
  });

  it("a refund whose payment is not posted waits; a refund of a payment in the same batch posts after it", async () => {
    const [paid, later, other] = payments(3, "defer");
    await send(paid!);
    // Naming no account: its account is its payment's, unknown until that is posted.
    const early = aStripeRefund({ payment: ref(later!), amount: 50 });
    await send(early);
    await send(other!);
    const sameBatch = aStripeRefund({ payment: ref(paid!), amount: 30 });
    await send(sameBatch);
    const { claims } = await pickUpReceived(50);
    const outcomes = await commitBatch(claims);
    expect(outcomes.map((o) => o.kind)).toEqual(["posted", "deferred", "posted", "posted"]);
    expect(outcomes[1]).toMatchObject({ failed: false });
    expect(await claimOf(early.data.object.id)).toMatchObject({
      status: "CLAIMED",
      claimedAt: null,
      waitingFor: ref(later!),
    });
    expect(await customer("acct_defer_0")).toBe(-100n + 30n);
    await send(later!);
    await drainAll();
    expect(await postingsOf(early.data.object.id)).toBe(1);
    expect(await customer("acct_defer_1")).toBe(-101n + 50n);
  });

  it("an over-refund in a batch is held; the refund that fits posts", async () => {
    const payment = aStripePayment({ amount: 1000n, account: "acct_held" });
    await send(payment);
    await drain();
    const refunds = [600, 600].map((amount) => aStripeRefund({ payment: ref(payment), amount }));
    for (const r of refunds) await send(r);
    const { claims } = await pickUpReceived(50);
    expect((await commitBatch(claims)).map((o) => o.kind)).toEqual(["posted", "held"]);
    expect((await claimOf(refunds[1]!.data.object.id)).status).toBe("HELD");
    expect(await customer("acct_held")).toBe(-400n);
  });

  it("a member whose write fails is given back with a back-off; the others commit", async () => {
    const batch = payments(3, "poison");
    const poison = ref(batch[1]!);
    const allow = await refusePostingOf(poison, "poisoned posting", "at insert");
    try {
      for (const p of batch) await send(p);
      await processOnce(silent);
      expect(await postingsOf(ref(batch[0]!))).toBe(1);
      expect(await postingsOf(ref(batch[2]!))).toBe(1);
      const failed = await claimOf(poison);
      expect(failed).toMatchObject({ status: "CLAIMED", claimedAt: null });
      expect(failed.lastError).toMatch(/^commit failed: .*poisoned posting/s);
      expect(failed.retryAt!.getTime()).toBeGreaterThan(Date.now());
    } finally {
      await allow();
    }
    await drainAll();
    expect(await postingsOf(poison)).toBe(1);
    expect(await customer("acct_poison_1")).toBe(-101n);
  });

  it("a payment refused at COMMIT inside the pick-up that posts it is given back alone; the others post", async () => {
    const batch = payments(3, "pickupcommit");
    const poison = ref(batch[1]!);
    const allow = await refusePostingOf(poison, "refused at commit", "at commit");
    try {
      for (const p of batch) await send(p);
      await processOnce(silent);
      expect(await postingsOf(ref(batch[0]!))).toBe(1);
      expect(await postingsOf(ref(batch[2]!))).toBe(1);
      expect(await postingsOf(poison)).toBe(0);
      const failed = await claimOf(poison);
      expect(failed).toMatchObject({ status: "CLAIMED", claimedAt: null });
      expect(failed.lastError).toMatch(/refused at commit/);
    } finally {
      await allow();
    }
    await prisma.processedEvent.updateMany({ where: { providerReference: poison }, data: { retryAt: new Date() } });
    await drain();
    expect(await postingsOf(poison)).toBe(1);
  });

  it("a batch that fails as a whole, at COMMIT, is retried member by member", async () => {
    const batch = payments(3, "atcommit");
    const poison = ref(batch[1]!);
    // A deferred check: it fires only at COMMIT, after every member's write succeeded.
    const allow = await refusePostingOf(poison, "refused at commit", "at commit");
    try {
      for (const p of batch) await send(p);
      const { claims } = await pickUpReceived(50);
      const outcomes = await commitBatch(claims);
      expect(outcomes.map((o) => o.kind)).toEqual(["posted", "error", "posted"]);
      expect(String((outcomes[1] as { error: unknown }).error)).toContain("refused at commit");
      expect(await postingsOf(poison)).toBe(0);
      expect(await postingsOf(ref(batch[0]!))).toBe(1);
      expect(await postingsOf(ref(batch[2]!))).toBe(1);
    } finally {
      await allow();
    }
    await prisma.processedEvent.updateMany({
      where: { providerReference: poison },
      data: { claimedAt: null, retryAt: new Date() },
    });
    await drain();
    expect(await postingsOf(poison)).toBe(1);
  });
});

describe("claims of a holder that is gone", () => {
  it("are taken over at once with a new token; a live holder's are left alone", async () => {
    const [alive, dead] = payments(2, "holder");
    await send(alive!);
    await send(dead!);
    const { claims } = await pickUpReceived(50);
    expect(claims).toHaveLength(2);
    // A live holder: a session that keeps its advisory lock. The other key's session is gone.
    const holder = new pg.Client({ connectionString: databaseUrl() });
    await holder.connect();
    try {
      await holder.query("SELECT pg_advisory_lock($1::int, $2::int)", [HOLDER_LOCK_CLASS, 4242]);
      await prisma.processedEvent.update({ where: { id: claims[0]!.claimId }, data: { claimedBy: 4242 } });
      await prisma.processedEvent.update({ where: { id: claims[1]!.claimId }, data: { claimedBy: 4343 } });
      const taken = await takeReleasedClaims();
      expect(taken.map((c) => [c.claimId, c.version, c.takenOver])).toEqual([
        [claims[1]!.claimId, claims[1]!.version + 1, true],
      ]);
      // The dead holder's late commit is fenced; the new owner's posts.
      expect((await commitBatch([claims[1]!])).map((o) => o.kind)).toEqual(["fenced"]);
      expect((await commitBatch([...claims.slice(0, 1), ...taken])).map((o) => o.kind)).toEqual(["posted", "posted"]);
    } finally {
      await holder.end();
    }
  });
});
