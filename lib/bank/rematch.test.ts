// Bank matching without an import: the scheduler's re-match (lib/bank/rematch.ts).
import { describe, expect, it } from "vitest";
import { aPayout, importStatement } from "@/dev/testing/bank";
import { aTenant, unique } from "@/dev/testing/builders";
import { REMATCH_MARGIN_SECONDS } from "@/lib/bank/match";
import { rematchTenant, runDueBankRematches, tenantsDueForRematch } from "@/lib/bank/rematch";
import { decideProposal, proposeResolution } from "@/lib/cases/cases";
import { prisma } from "@/lib/platform/db";

const bankRuns = (tenantId: string) => prisma.reconRun.findMany({ where: { tenantId, source: "BANK" } });

async function twoAccountants() {
  return Promise.all(
    ["alice", "bruno"].map(async (n) => {
      const u = await prisma.user.create({ data: { email: `${unique(n)}@bank.test`, role: "accountant" } });
      return { userId: u.id, label: u.email };
    }),
  );
}

describe("matching again when a payout comes after its statement", () => {
  it("matches a credit already on file to a payout that arrives later, closing the credit's case, with no import", async () => {
    const t = await aTenant();
    // The bank shows Adyen's credit; no payout of Adyen's is known yet, and the statements cover its window.
    const imported = await importStatement(
      t.id,
      [{ amount: 98_765n, bookingDate: "2026-12-02", remittance: ["SETTLEMENT 4411"], counterparty: "Adyen N.V." }],
      { from: "2026-12-01", to: "2026-12-08" },
    );
    expect(imported).toMatchObject({ unmatchedCredits: 1, casesOpened: 1 });
    const credit = await prisma.reconDiscrepancy.findFirstOrThrow({
      where: { tenantId: t.id },
      include: { case: true },
    });
    expect(credit.case?.status).toBe("OPEN");
    expect(await tenantsDueForRematch()).not.toContain(t.id);

    const payout = await aPayout(t.id, { amount: 98_765n, arrival: "2026-12-01", provider: "adyen" });
    expect(await tenantsDueForRematch()).toContain(t.id);
    const outcomes = (await runDueBankRematches()).filter((o) => o.tenantId === t.id);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]!.summary).toMatchObject({ matchedPayouts: 1, casesClosed: 1, unmatchedCredits: 0 });

    expect(await prisma.payout.findUniqueOrThrow({ where: { id: payout.id } })).toMatchObject({
      status: "SETTLED",
    });
    expect(
      await prisma.reconDiscrepancy.findUniqueOrThrow({ where: { id: credit.id }, include: { case: true } }),
    ).toMatchObject({ state: "RESOLVED", case: { status: "RESOLVED" } });
    const close = await prisma.auditLog.findFirstOrThrow({
      where: { tenantId: t.id, action: "case.close", subjectId: String(credit.case!.id) },
    });
    expect(close.actorType).toBe("SYSTEM");
    const runs = await bankRuns(t.id);
    expect(runs.map((r) => r.sourceName).sort()).toEqual([
      expect.stringMatching(/^bank statement #/),
      "re-match: payouts posted or changed since the last matching",
    ]);
    expect(runs.find((r) => r.sourceName?.startsWith("re-match"))).toMatchObject({
      provider: "adyen",
      status: "DONE",
      actorType: "SYSTEM",
      matched: 1,
    });
    // Settled, the payout no longer makes the tenant due.
    expect(await tenantsDueForRematch()).not.toContain(t.id);
  });

  it("flags a payout whose window the statements already cover as soon as it is posted, once", async () => {
    const t = await aTenant();
    await importStatement(t.id, [{ amount: 1n, bookingDate: "2026-12-03" }], { from: "2026-12-01", to: "2026-12-10" });
    const payout = await aPayout(t.id, { amount: 4_400n, arrival: "2026-12-02", reference: "po_lateRow01" });

    const first = await rematchTenant(t.id);
    expect(first).toMatchObject({ unmatchedPayouts: 1, casesOpened: 1, matchedPayouts: 0 });
    const d = await prisma.reconDiscrepancy.findFirstOrThrow({ where: { tenantId: t.id }, include: { case: true } });
    expect(d).toMatchObject({ reference: "po_lateRow01", bucket: "BANK_UNMATCHED", cause: "BANK", ourAmount: 4_400n });
    expect(d.case?.status).toBe("OPEN");
    const runsAfterFirst = (await bankRuns(t.id)).length;

    // The mark trails by a margin, so the next ticks find the tenant due again: they change nothing and record nothing.
    expect(await tenantsDueForRematch()).toContain(t.id);
    expect(await rematchTenant(t.id)).toBeNull();
    expect(await rematchTenant(t.id)).toBeNull();
    expect((await bankRuns(t.id)).length).toBe(runsAfterFirst);
    expect(await prisma.case.count({ where: { tenantId: t.id } })).toBe(1);

    // Once the payout's change is older than the margin, the tenant is not due.
    await prisma.$executeRaw`UPDATE payouts SET updated_at = now() - ${REMATCH_MARGIN_SECONDS + 1} * interval '1 second' WHERE id = ${payout.id}`;
    await prisma.$executeRaw`UPDATE tenants SET bank_matched_through = now() - ${REMATCH_MARGIN_SECONDS} * interval '1 second' WHERE id = ${t.id}::uuid`;
    expect(await tenantsDueForRematch()).not.toContain(t.id);
  });

  it("does not reopen a case two accountants parked as timing: nothing new came from the bank", async () => {
    const t = await aTenant();
    await importStatement(t.id, [{ amount: 1n, bookingDate: "2026-12-04" }], { from: "2026-12-01", to: "2026-12-09" });
    await aPayout(t.id, { amount: 4_400n, arrival: "2026-12-01", reference: "po_timing02" });
    expect(await rematchTenant(t.id)).toMatchObject({ casesOpened: 1 });
    const c = await prisma.case.findFirstOrThrow({ where: { tenantId: t.id } });
    const [alice, bruno] = await twoAccountants();
    const proposed = await proposeResolution(t.id, c.id, alice!, { resolution: "TIMING", reason: "booked late" });
    if (!proposed.ok) throw new Error(proposed.message);
    const decided = await decideProposal(t.id, c.id, proposed.value.proposalId, bruno!, { decision: "approve" });
    if (!decided.ok) throw new Error(decided.message);

    // Another payout of the tenant changes: the tenant is due, and its parked case stays parked.
    await aPayout(t.id, { amount: 7_700n, arrival: "2026-12-20", reference: "po_other02" });
    expect(await tenantsDueForRematch()).toContain(t.id);
    expect(await rematchTenant(t.id)).toBeNull();
    expect(await prisma.case.findUniqueOrThrow({ where: { id: c.id } })).toMatchObject({ status: "WAITING" });
    expect(await prisma.auditLog.count({ where: { tenantId: t.id, action: "case.reopen" } })).toBe(0);
  });

  it("counts an import as a matching: a payout it saw does not make the tenant due again", async () => {
    const t = await aTenant();
    const payout = await aPayout(t.id, { amount: 900n, arrival: "2026-12-20" });
    await prisma.$executeRaw`UPDATE payouts SET updated_at = now() - ${REMATCH_MARGIN_SECONDS + 60} * interval '1 second' WHERE id = ${payout.id}`;
    await importStatement(t.id, [{ amount: 1n, bookingDate: "2026-12-03" }], { from: "2026-12-01", to: "2026-12-04" });
    expect(await tenantsDueForRematch()).not.toContain(t.id);
  });

  it("leaves a tenant without bank statements alone", async () => {
    const t = await aTenant();
    await aPayout(t.id, { amount: 500n, arrival: "2026-12-01" });
    expect(await tenantsDueForRematch()).not.toContain(t.id);
  });
});
