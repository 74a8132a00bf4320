// A generated day of Adyen (dev/simulator/day.ts: batched notifications, retries,
// captures, refunds, items that move no money, whatever else the seed draws) through the signed route and the worker, then the simulator's Settlement Details
// Report of the batch closing over it (./simulate.ts adyenSettlementBatch): every
// record matches, the fees and payouts are posted from the report, and every payout's
// statement balances to zero on both sides.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { balancesByCode } from "@/lib/ledger/accounts";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { prisma } from "@/lib/platform/db";
import { type AdyenBatch, adyenSettlementBatch } from "@/lib/providers/adyen/simulate";
import { payoutStatements } from "@/lib/recon/payouts";
import { runReconciliation, type ReconSummary } from "@/lib/recon/run";
import { type Day, generateDay } from "@/dev/simulator/day";
import { signedDelivery } from "@/dev/simulator/sign";
import { aTenant, type TestTenant } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { anEndpoint } from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";

const dayStart = Math.floor(Date.now() / 1000 / 86_400) * 86_400 - 4 * 86_400;
let tenant: TestTenant;
let day: Day;
let batch: AdyenBatch;
let summary: ReconSummary;

beforeAll(async () => {
  tenant = await aTenant();
  const key = await anEndpoint(tenant, "adyen");
  day = generateDay({
    seed: 20,
    events: 120,
    tenants: [tenant.slug],
    providers: ["adyen"],
    dayStart,
    badSignatureRate: 0.03,
  });
  const statuses = new Map<number, number>();
  for (const d of day.deliveries) {
    const signed = signedDelivery(d, { adyen: key });
    const res = await deliver(
      new Request(`http://tally.test/api/webhooks/${tenant.slug}/adyen`, {
        method: "POST",
        headers: signed.headers,
        body: signed.body,
      }),
    );
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  }
  // The day's bad signatures are refused; their retries, and everything else, stored.
  const invalid = day.deliveries.filter((d) => d.signature === "invalid").length;
  expect(Object.fromEntries(statuses)).toEqual({
    200: day.deliveries.length - invalid,
    ...(invalid && { 401: invalid }),
  });
  await drainAll();
  batch = adyenSettlementBatch(day.movements, { batch: 31, closedAt: dayStart + 86_399 });
  const file = path.join(
    mkdtempSync(path.join(os.tmpdir(), "tally-adyen-day-")),
    "settlement_detail_report_batch_31.csv",
  );
  writeFileSync(file, batch.csv);
  const r = await runReconciliation({
    tenantId: tenant.id,
    provider: "adyen",
    source: { kind: "csv", file },
    actor: SYSTEM_ACTOR,
  });
  if (!r.ok) throw new Error(r.message);
  summary = r.value;
  await drainAll();
}, 300_000);

describe("a generated Adyen day reconciles to its payouts", () => {
  it("matches every payment and refund, posts every fee and payout from the report, and opens no case", () => {
    const payments = day.movements.filter((m) => m.kind === "PAYMENT").length;
    const refunds = day.movements.length - payments;
    expect(payments).toBeGreaterThan(20);
    expect(refunds).toBeGreaterThan(0);
    // Several currencies, so several payouts of one batch.
    expect(batch.payouts.length).toBeGreaterThan(1);
    expect(summary).toMatchObject({
      matched: payments + refunds,
      mismatched: 0,
      oursNotTheirs: 0,
      casesOpened: 0,
      notReconciled: 0,
      fetchFailed: 0,
      // Each payment's commission and interchange, and each currency's Fee record.
      feesPosted: payments + batch.payouts.length + batch.carried.length,
      // The payouts and carried balances are expected from the report: nothing is missing.
      theirsNotOurs: 0,
      postedFromSettlement: batch.payouts.length + batch.carried.length,
      payouts: batch.payouts.length + batch.carried.length,
      payoutResiduals: 0,
    });
  });

  it("balances every payout's statement to zero on both sides, at the amount the report paid out", async () => {
    const statements = await payoutStatements(tenant.id, "adyen");
    expect(statements.map((s) => [s.reference, s.currency, s.theirs.payout]).sort()).toEqual(
      batch.payouts.map((p) => [p.reference, p.currency, p.amount]).sort(),
    );
    for (const s of statements) {
      expect([s.reference, s.theirs.residual, s.ours.residual]).toEqual([s.reference, 0n, 0n]);
      expect(s.ours.payout).toBe(s.theirs.payout);
      expect(s.theirs.fees).toBeLessThan(0n);
    }
    const balances = await balancesByCode(tenant.id);
    for (const p of batch.payouts)
      expect(balances.find((b) => b.code === "bank:(unknown)" && b.currency === p.currency)?.amount).toBe(p.amount);
    // All the day's money has left Adyen for the bank (or, for a batch in deficit, waits in the next batch).
    for (const b of balances.filter((b) => b.code === "clearing:adyen"))
      expect([b.currency, b.amount]).toEqual([b.currency, 0n]);
    expect(await prisma.case.count({ where: { tenantId: tenant.id } })).toBe(0);
    expect(await ledgerViolations()).toEqual([]);
  });
});
