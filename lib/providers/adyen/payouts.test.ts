// Adyen to the payout: payments, a refund and a chargeback through the signed route
// and the worker, then batch 7's Settlement Details Report (per-record fees, the
// month's Fee, an InvoiceDeduction and the MerchantPayout) through a reconciliation
// run and the worker again: the payout is posted from the report, its statement
// balances on both sides line by line, and the same report again posts nothing twice.
// Batch 8 carries two planted defects: a PaymentCost for a payment we never saw and a
// MerchantPayout 1.00 more than its records; each ends as exactly its expected outcome.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { balancesByCode } from "@/lib/ledger/accounts";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { prisma } from "@/lib/platform/db";
import { type AdyenSdrRecord, adyenSettlementCsv } from "@/lib/providers/adyen/simulate";
import { getPayout, payoutStatements } from "@/lib/recon/payouts";
import { runReconciliation, type ReconSummary } from "@/lib/recon/run";
import { aTenant, type TestTenant, unique, webhookRequest } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { anAdyenBatch, anAdyenItem, anEndpoint, aPspReference, signedByAdyen } from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";

const dir = mkdtempSync(path.join(os.tmpdir(), "tally-adyen-payouts-"));
const MERCHANT = "TallyTestMerchant";
const start = Math.floor(Date.now() / 1000 / 86_400) * 86_400 - 3 * 86_400 + 8 * 3600;
const iso = (unix: number) => new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

let tenant: TestTenant;
let key: string;
const p1 = aPspReference();
const p2 = aPspReference();
const p3 = aPspReference();
const r1 = aPspReference();
const cb = aPspReference();
const p4 = aPspReference();
const neverSeen = aPspReference();
const payout7 = `${MERCHANT}:batch:7:GBP`;
const payout8 = `${MERCHANT}:batch:8:GBP`;

const record = (o: Partial<AdyenSdrRecord> & Pick<AdyenSdrRecord, "type" | "at" | "net">): AdyenSdrRecord => ({
  merchant: MERCHANT,
  batch: 7,
  ...o,
});
const settled = (psp: string, at: number, gross: bigint, commission: bigint, interchange: bigint, batch = 7) =>
  record({
    type: "Settled",
    batch,
    at,
    psp,
    modification: aPspReference(),
    paymentMethod: "visa",
    gross: { currency: "GBP", credit: gross },
    net: { currency: "GBP", credit: gross - commission - interchange },
    commission,
    interchange,
  });

// Batch 7. Per-record fees 0.80 + 0.50 + 0.24 + 2.00 (the chargeback's), the month's fee
// 0.50 and an invoice deduction of 12.00: 170.00 − 10.00 − 20.00 − 3.54 − 0.50 − 12.00 = 123.96.
const batch7: AdyenSdrRecord[] = [
  settled(p1, start + 60, 10_000n, 60n, 20n),
  settled(p2, start + 120, 5_000n, 40n, 10n),
  settled(p3, start + 180, 2_000n, 20n, 4n),
  record({
    type: "Refunded",
    at: start + 240,
    psp: p2,
    modification: r1,
    paymentMethod: "visa",
    gross: { currency: "GBP", debit: 1_000n },
    net: { currency: "GBP", debit: 1_000n },
  }),
  record({
    type: "Chargeback",
    at: start + 300,
    psp: p3,
    modification: cb,
    paymentMethod: "visa",
    gross: { currency: "GBP", debit: 2_000n },
    net: { currency: "GBP", debit: 2_200n },
    commission: 200n,
  }),
  record({ type: "Fee", at: start + 3600, modification: "Transaction Fees", net: { currency: "GBP", debit: 50n } }),
  record({
    type: "InvoiceDeduction",
    at: start + 3660,
    modification: "Invoice 202606000553",
    net: { currency: "GBP", debit: 1_200n },
  }),
  record({
    type: "MerchantPayout",
    at: start + 3720,
    modification: `TX000000000007XT batch 7, ${MERCHANT}`,
    net: { currency: "GBP", debit: 12_396n },
  }),
];

// Batch 8: p4 (50.00, fees 0.40) and a 3.00 PaymentCost naming a payment Tally never saw:
// 50.00 − 0.40 − 3.00 = 46.60, but the MerchantPayout says 47.60.
const batch8: AdyenSdrRecord[] = [
  settled(p4, start + 86_400, 5_000n, 30n, 10n, 8),
  record({
    type: "PaymentCost",
    batch: 8,
    at: start + 86_460,
    psp: neverSeen,
    modification: "Klarna late return fee",
    net: { currency: "GBP", debit: 300n },
  }),
  record({ type: "MerchantPayout", batch: 8, at: start + 86_520, net: { currency: "GBP", debit: 4_760n } }),
];

async function reconcile(records: AdyenSdrRecord[]): Promise<ReconSummary> {
  const file = path.join(dir, `${unique("settlement_detail_report_batch_")}.csv`);
  writeFileSync(file, adyenSettlementCsv(records, "TallyCompany"));
  const r = await runReconciliation({
    tenantId: tenant.id,
    provider: "adyen",
    source: { kind: "csv", file },
    actor: SYSTEM_ACTOR,
  });
  if (!r.ok) throw new Error(r.message);
  return r.value;
}
const balance = async (code: string) =>
  (await balancesByCode(tenant.id)).find((b) => b.code === code && b.currency === "GBP")?.amount ?? 0n;

let first: ReconSummary;
beforeAll(async () => {
  tenant = await aTenant();
  key = await anEndpoint(tenant, "adyen");
  const item = (o: Parameters<typeof anAdyenItem>[0]) => signedByAdyen(anAdyenItem({ currency: "GBP", ...o }), key);
  const items = [
    item({ pspReference: p1, value: 10_000, eventDate: iso(start + 60) }),
    item({ pspReference: p2, value: 5_000, eventDate: iso(start + 120) }),
    item({ pspReference: p3, value: 2_000, eventDate: iso(start + 180) }),
    item({ eventCode: "REFUND", pspReference: r1, originalReference: p2, value: 1_000, eventDate: iso(start + 240) }),
    item({
      eventCode: "CHARGEBACK",
      pspReference: cb,
      originalReference: p3,
      value: 2_000,
      eventDate: iso(start + 300),
    }),
    item({ pspReference: p4, value: 5_000, eventDate: iso(start + 86_400) }),
  ];
  const res = await deliver(webhookRequest(tenant.slug, "adyen", JSON.stringify(anAdyenBatch(items)), {}));
  expect(res.status).toBe(200);
  await drainAll();
  expect(await prisma.posting.count({ where: { tenantId: tenant.id } })).toBe(6);
  first = await reconcile(batch7);
  // The fees, the invoice deduction and the payout, queued from the report, posted by the worker.
  await drainAll();
});

describe("batch 7's report through a run and the worker", () => {
  it("matches every payment, refund and chargeback, and queues the fees, the deduction and the payout from the report, opening no case", () => {
    expect(first).toMatchObject({
      matched: 5,
      mismatched: 0,
      oursNotTheirs: 0,
      // The deduction and the payout: Adyen reports them only here, so they are expected
      // from the report, posted from it, and nothing is missing.
      theirsNotOurs: 0,
      postedFromSettlement: 2,
      // Four records' own fees and the month's Fee record.
      feesPosted: 5,
      fetchFailed: 0,
      casesOpened: 0,
      notReconciled: 0,
      payouts: 1,
      payoutResiduals: 0,
    });
  });

  it("posts the payout from the report to the bank in transit, and its statement balances to zero on both sides, line by line", async () => {
    const payout = await prisma.payout.findFirstOrThrow({ where: { tenantId: tenant.id, reference: payout7 } });
    expect(payout).toMatchObject({
      provider: "adyen",
      status: "IN_TRANSIT",
      ourAmount: 12_396n,
      theirAmount: 12_396n,
      destination: null,
    });
    // The day the MerchantPayout was booked: the first it can reach the bank.
    expect(payout.arrivalDate).toEqual(new Date("2026-12-04T00:00:00Z"));
    // Posted as a settlement movement the worker claimed, not fetched: Adyen has no payout to fetch.
    // No webhook was ever due for it: no discrepancy, no cause, nothing for a person.
    expect(await prisma.reconDiscrepancy.count({ where: { tenantId: tenant.id, reference: payout7 } })).toBe(0);
    const claim = await prisma.processedEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, provider: "adyen", providerReference: payout7 },
    });
    expect(await prisma.rawEvent.findUniqueOrThrow({ where: { id: claim.rawEventId } })).toMatchObject({
      source: "SETTLEMENT",
      status: "DONE",
    });
    expect(await balance("bank:(unknown)")).toBe(12_396n);
    expect(await balance("fees:adyen")).toBe(404n);
    expect(await balance("adjustments:adyen")).toBe(1_200n);
    expect(await balance("disputes:adyen")).toBe(2_000n);
    // Everything batch 7 moved has left for the bank: only batch 8's p4 is still held.
    expect(await balance("clearing:adyen")).toBe(5_000n);

    const found = await getPayout(tenant.id, "adyen", payout7);
    const side = {
      gross: 17_000n,
      refunds: -1_000n,
      fees: -404n,
      disputes: -2_000n,
      adjustments: -1_200n,
      net: 12_396n,
      payout: 12_396n,
      residual: 0n,
    };
    expect(found!.statement).toMatchObject({ currency: "GBP", lines: 7, theirs: side, ours: side });
    expect(found!.lines.map((l) => [l.kind, l.reference, l.theirGross, l.theirFee, l.agrees])).toEqual([
      ["PAYMENT", p1, 10_000n, 80n, true],
      ["PAYMENT", p2, 5_000n, 50n, true],
      ["PAYMENT", p3, 2_000n, 24n, true],
      ["REFUND", r1, -1_000n, 0n, true],
      ["DISPUTE", cb, -2_000n, 200n, true],
      ["FEE", `${MERCHANT}:batch:7:Fee:Transaction Fees`, -50n, 0n, true],
      ["ADJUSTMENT", `${MERCHANT}:batch:7:InvoiceDeduction:Invoice 202606000553`, -1_200n, 0n, true],
    ]);
    expect(await ledgerViolations()).toEqual([]);
  });

  it("posts nothing twice when the same report is uploaded again", async () => {
    const postings = await prisma.posting.count({ where: { tenantId: tenant.id } });
    const bank = await balance("bank:(unknown)");
    const again = await reconcile(batch7);
    expect(again).toMatchObject({
      theirsNotOurs: 0,
      oursNotTheirs: 0,
      mismatched: 0,
      feesPosted: 0,
      postedFromSettlement: 0,
      casesOpened: 0,
      payoutResiduals: 0,
      // The deduction and the payout were never discrepancies: nothing to resolve.
      resolvedOnRecheck: 0,
    });
    await drainAll();
    expect(await prisma.posting.count({ where: { tenantId: tenant.id } })).toBe(postings);
    expect(await balance("bank:(unknown)")).toBe(bank);
    expect(await prisma.payout.count({ where: { tenantId: tenant.id } })).toBe(1);
    const [s] = await payoutStatements(tenant.id, "adyen", [payout7]);
    expect([s!.theirs.residual, s!.ours.residual, s!.lines]).toEqual([0n, 0n, 7]);
  });
});

describe("batch 8's planted defects", () => {
  let summary: ReconSummary;
  beforeAll(async () => {
    summary = await reconcile(batch8);
    await drainAll();
  });

  it("a payout 1.00 more than its records is exactly one PAYOUT_RESIDUAL case, carrying the statement and the lines that explain it", async () => {
    expect(summary).toMatchObject({ payouts: 1, payoutResiduals: 1, mismatched: 0, oursNotTheirs: 0 });
    const residuals = await prisma.reconDiscrepancy.findMany({
      where: { tenantId: tenant.id, bucket: "PAYOUT_RESIDUAL" },
      include: { case: true },
    });
    expect(residuals).toHaveLength(1);
    expect(residuals[0]).toMatchObject({
      reference: payout8,
      cause: "PAYOUT_RESIDUAL",
      theirAmount: 4_760n,
      ourAmount: 4_660n,
      case: { kind: "PAYOUT_RESIDUAL", status: "OPEN" },
    });
    const evidence = residuals[0]!.theirLine as {
      statement: Record<string, string>;
      lines: { reference: string; kind: string; gross: string; fee: string }[];
    };
    expect(evidence.statement).toMatchObject({ net: "4660", payout: "4760", residual: "100" });
    expect(evidence.lines.map((l) => [l.kind, l.reference, l.gross, l.fee])).toEqual([
      ["PAYMENT", p4, "5000", "40"],
      ["FEE", `${MERCHANT}:batch:8:PaymentCost:Klarna late return fee`, "-300", "0"],
      ["PAYOUT", payout8, "-4760", "0"],
    ]);
    // The payout still reached the bank as Adyen says, and batch 7's statement is untouched.
    expect(await balance("bank:(unknown)")).toBe(12_396n + 4_760n);
    const [s7] = await payoutStatements(tenant.id, "adyen", [payout7]);
    expect(s7!.theirs.residual).toBe(0n);
  });

  it("a cost for a payment we never saw is posted as the fee Adyen took, invents no payment, and is no case of its own", async () => {
    const reference = `${MERCHANT}:batch:8:PaymentCost:Klarna late return fee`;
    const posting = await prisma.posting.findFirstOrThrow({
      where: { tenantId: tenant.id, providerReference: reference },
      include: { entries: { include: { account: true } } },
    });
    expect(posting.kind).toBe("FEE");
    expect(posting.entries.map((e) => [e.account.code, e.amount]).sort()).toEqual(
      [
        ["clearing:adyen", -300n],
        ["fees:adyen", 300n],
      ].sort(),
    );
    expect(await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: neverSeen } })).toBe(0);
    // The one case of the tenant is the payout residual.
    expect(await prisma.case.count({ where: { tenantId: tenant.id } })).toBe(1);
    expect(await ledgerViolations()).toEqual([]);
  });
});
