// The acceptance test of reconciliation to the payout (#20): a generated month of
// Stripe (dev/simulator/month.ts: fees on every charge, disputes won and lost, daily
// payouts to one bank account, a camt.053 statement, four planted defects) goes through
// the real route, the worker, the settlement report and the bank statement, and ends
// with every payout's statement balanced, the bank matching every payout, and each
// defect as exactly the expected case.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { importBankStatement, type ImportSummary } from "@/lib/bank/import";
import { balancesByCode } from "@/lib/ledger/accounts";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { prisma } from "@/lib/platform/db";
import { payoutStatements } from "@/lib/recon/payouts";
import { runReconciliation, type ReconSummary } from "@/lib/recon/run";
import { generateMonth, type Month } from "@/dev/simulator/month";
import { signedDelivery } from "@/dev/simulator/sign";
import { aTenant, type TestTenant } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";

let tenant: TestTenant;
let month: Month;
let first: ReconSummary;
let second: ReconSummary;
let bank: ImportSummary;
const dir = mkdtempSync(path.join(os.tmpdir(), "tally-month-"));

async function reconcile(): Promise<ReconSummary> {
  const r = await runReconciliation({
    tenantId: tenant.id,
    provider: "stripe",
    source: { kind: "csv", file: path.join(dir, "settlement.csv") },
    actor: SYSTEM_ACTOR,
  });
  if (!r.ok) throw new Error(r.message);
  return r.value;
}

beforeAll(async () => {
  tenant = await aTenant();
  month = generateMonth({ seed: 2026, tenant: tenant.slug, days: 30, chargesPerDay: 8 });
  // Every delivery through the real route handler, signed as Stripe signs, in order.
  const statuses = new Map<number, number>();
  for (const d of month.deliveries) {
    const signed = signedDelivery(d, { stripe: tenant.stripeSecret });
    const response = await deliver(
      new Request(`http://tally.test/api/webhooks/${tenant.slug}/stripe`, {
        method: "POST",
        headers: signed.headers,
        body: signed.body,
      }),
    );
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  }
  expect([...statuses.keys()]).toEqual([200]);
  await drainAll();
  writeFileSync(path.join(dir, "settlement.csv"), month.settlementCsv);
  writeFileSync(path.join(dir, "bank.xml"), month.camt053);
  first = await reconcile();
  // The fees and the undelivered dispute, queued from the settlement, are posted by the worker.
  await drainAll();
  second = await reconcile();
  const imported = await importBankStatement({
    tenantId: tenant.id,
    source: { file: path.join(dir, "bank.xml") },
    format: "camt053",
    sourceName: "bank.xml",
    actor: SYSTEM_ACTOR,
  });
  if (!imported.ok) throw new Error(imported.message);
  bank = imported.value;
}, 300_000);

const expectation = <K extends Month["truth"]["expected"][number]["kind"]>(kind: K, defect?: string) =>
  month.truth.expected.filter((e) => e.kind === kind && (!defect || e.defect === defect)) as Extract<
    Month["truth"]["expected"][number],
    { kind: K }
  >[];

describe("a generated month reconciles to the payout and the bank", () => {
  it("posts every fee from the settlement, and every line of the month matches our ledger", () => {
    const charges = month.settlementCsv.split("\n").filter((l) => l.includes(",charge,")).length;
    // Every charge has a fee but the one the report left out; each dispute has one too.
    expect(first.feesPosted).toBe(charges - 1 + month.truth.disputes.length);
    expect(first).toMatchObject({ oursNotTheirs: 0, mismatched: 0, casesOpened: 0 });
    // The one movement no webhook brought: the dispute, posted from the settlement.
    expect(first.theirsNotOurs).toBe(1);
    expect(first.postedFromSettlement).toBe(1);
    expect(second).toMatchObject({
      theirsNotOurs: 0,
      oursNotTheirs: 0,
      mismatched: 0,
      feesPosted: 0,
      resolvedOnRecheck: 1,
    });
  });

  it("balances every payout's statement, from the provider's lines and from our ledger, but the two planted residuals", async () => {
    const statements = await payoutStatements(tenant.id, "stripe");
    expect(statements.map((s) => s.reference).sort()).toEqual(month.truth.payouts.map((p) => p.reference).sort());
    const residuals = new Map(expectation("PAYOUT_RESIDUAL").map((e) => [e.reference, e.residual]));
    expect(residuals.size).toBe(2);
    for (const s of statements) {
      const truth = month.truth.payouts.find((p) => p.reference === s.reference)!;
      const want = residuals.get(s.reference) ?? 0n;
      expect({ reference: s.reference, theirs: s.theirs.residual, ours: s.ours.residual }).toEqual({
        reference: s.reference,
        theirs: want,
        ours: want,
      });
      expect(s.theirs.payout).toBe(truth.amount);
      expect(s.ours.payout).toBe(truth.amount);
      expect(s.theirs.net).toBe(truth.linesNet);
      expect(s.theirs.fees).toBeLessThan(0n);
    }
  });

  it("matches every payout to its bank credit but the one that never came, N:1 included", async () => {
    const payouts = await prisma.payout.findMany({ where: { tenantId: tenant.id }, include: {} });
    const missing = expectation("BANK_UNMATCHED")[0]!;
    for (const p of payouts) {
      const truth = month.truth.payouts.find((t) => t.reference === p.reference)!;
      if (p.reference === missing.reference) expect(p).toMatchObject({ status: "IN_TRANSIT", bankLineId: null });
      else {
        expect({ reference: p.reference, status: p.status }).toEqual({ reference: p.reference, status: "SETTLED" });
        const line = await prisma.bankLine.findUniqueOrThrow({ where: { id: p.bankLineId! } });
        expect(line.bookingDate.toISOString().slice(0, 10)).toBe(truth.bankBookingDate);
      }
    }
    const combined = month.truth.payouts.filter((p) => p.remittance === "combined");
    expect(combined).toHaveLength(2);
    const [a, b] = await Promise.all(combined.map((c) => payouts.find((p) => p.reference === c.reference)!.bankLineId));
    expect(a).not.toBeNull();
    expect(a).toBe(b);
    expect(bank.matchedPayouts).toBe(payouts.length - 1);
  });

  it("ends each planted defect as exactly the expected case, and nothing else", async () => {
    const cases = await prisma.case.findMany({
      where: { tenantId: tenant.id },
      include: { discrepancy: true },
      orderBy: { id: "asc" },
    });
    const got = cases.map((c) => ({ kind: c.kind, reference: c.discrepancy?.reference, status: c.status }));
    const want = month.truth.expected
      .filter((e) => e.opensCase)
      .map((e) => ({ kind: e.kind, reference: e.reference, status: "OPEN" }));
    expect(got.sort((x, y) => x.reference!.localeCompare(y.reference!))).toEqual(
      want.sort((x, y) => x.reference.localeCompare(y.reference)),
    );
    const fee = expectation("PAYOUT_RESIDUAL", "missing_fee")[0] as Extract<
      Month["truth"]["expected"][number],
      { defect: "missing_fee" }
    >;
    const residual = cases.find((c) => c.discrepancy?.reference === fee.reference)!.discrepancy!;
    expect(residual).toMatchObject({
      cause: "PAYOUT_RESIDUAL",
      theirAmount: month.truth.payouts.find((p) => p.reference === fee.reference)!.amount,
    });
    // The case carries the statement and the lines that explain it.
    const evidence = residual.theirLine as { lines: { reference: string; fee: string }[] };
    expect(evidence.lines.find((l) => l.reference === fee.line)).toMatchObject({ fee: "0" });

    const dispute = expectation("THEIRS_NOT_OURS")[0]!;
    const found = await prisma.reconDiscrepancy.findMany({ where: { tenantId: tenant.id, bucket: "THEIRS_NOT_OURS" } });
    expect(found.map((d) => ({ reference: d.reference, cause: d.cause, state: d.state }))).toEqual([
      { reference: dispute.reference, cause: "NEVER_DELIVERED", state: "RESOLVED" },
    ]);
    const raw = await prisma.rawEvent.findUniqueOrThrow({ where: { id: found[0]!.rawEventId! } });
    expect(raw).toMatchObject({ source: "SETTLEMENT", status: "DONE" });
  });

  it("leaves the ledger as the month's truth, balanced", async () => {
    const balances = await balancesByCode(tenant.id);
    const got = Object.fromEntries(balances.filter((b) => b.amount !== 0n).map((b) => [b.code, b.amount]));
    const want = Object.fromEntries(Object.entries(month.truth.balances).filter(([, v]) => v !== 0n));
    expect(got).toEqual(want);
    expect(await ledgerViolations()).toEqual([]);
  });
});
