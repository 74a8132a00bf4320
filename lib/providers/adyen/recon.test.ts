// Adyen end to end: batched notifications through the door and the worker, then
// the Settlement Details Report CSV reconciled against what was posted.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { ADYEN_SDR_HEADER } from "@/lib/providers/adyen/simulate";
import { runReconciliation } from "@/lib/recon/run";
import { aTenant, webhookRequest, type TestTenant } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { anAdyenBatch, anAdyenItem, anEndpoint, aPspReference, signedByAdyen } from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";

let tenant: TestTenant;
let key: string;
beforeAll(async () => {
  tenant = await aTenant();
  key = await anEndpoint(tenant, "adyen");
});

/** The report's first 23 columns, up to Batch Number: the rows below write no Reserved ones. */
const HEADER = ADYEN_SDR_HEADER.slice(0, ADYEN_SDR_HEADER.indexOf("Batch Number") + 1);
type Row = {
  psp: string;
  type: "Settled" | "Refunded" | "Fee" | "MerchantPayout" | "Chargeback" | "ChargebackReversed" | "SecondChargeback";
  modification?: string;
  currency: string;
  debit?: string;
  credit?: string;
  at: string;
};
const csv = (rows: Row[]) =>
  `${[
    HEADER.join(","),
    ...rows.map((r) =>
      [
        "TallyCompany",
        "TallyTestMerchant",
        r.psp,
        "order-1",
        "visa",
        r.at,
        "CET",
        r.type,
        r.modification ?? "",
        r.currency,
        r.debit ?? "",
        r.credit ?? "",
        "1",
        r.currency,
        r.debit ?? "",
        r.credit ?? "",
        "0.12",
        "",
        "0.02",
        "0.10",
        "visa",
        "",
        "42",
      ].join(","),
    ),
  ].join("\n")}\n`;

describe("reconciling Adyen from its Settlement Details Report", () => {
  it("matches what arrived, finds what did not, and names a mismatch", async () => {
    const paid = [aPspReference(), aPspReference(), aPspReference()];
    const refundPsp = aPspReference();
    const items = [
      anAdyenItem({ pspReference: paid[0], value: 1130, currency: "EUR", eventDate: "2026-12-01T10:00:00+01:00" }),
      anAdyenItem({ pspReference: paid[1], value: 2500, currency: "EUR", eventDate: "2026-12-01T11:00:00+01:00" }),
      anAdyenItem({ pspReference: paid[2], value: 999, currency: "EUR", eventDate: "2026-12-01T12:00:00+01:00" }),
      anAdyenItem({
        eventCode: "REFUND",
        pspReference: refundPsp,
        originalReference: paid[1],
        value: 500,
        currency: "EUR",
        eventDate: "2026-12-01T13:00:00+01:00",
      }),
    ].map((item) => signedByAdyen(item, key));
    const res = await deliver(webhookRequest(tenant.slug, "adyen", JSON.stringify(anAdyenBatch(items)), {}));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("[accepted]");
    await drainAll();
    expect(await prisma.posting.count({ where: { tenantId: tenant.id } })).toBe(4);

    const neverArrived = aPspReference();
    const file = path.join(
      mkdtempSync(path.join(os.tmpdir(), "tally-adyen-")),
      "settlement_detail_report_batch_42.csv",
    );
    const rows: Row[] = [
      { psp: paid[0]!, type: "Settled", currency: "EUR", credit: "11.30", at: "2026-12-01 10:00:00" },
      { psp: paid[1]!, type: "Settled", currency: "EUR", credit: "25.00", at: "2026-12-01 11:00:00" },
      { psp: paid[2]!, type: "Settled", currency: "EUR", credit: "9.90", at: "2026-12-01 12:00:00" },
      {
        psp: paid[1]!,
        type: "Refunded",
        modification: refundPsp,
        currency: "EUR",
        debit: "5.00",
        at: "2026-12-01 13:00:00",
      },
      { psp: neverArrived, type: "Settled", currency: "EUR", credit: "42.00", at: "2026-12-01 14:00:00" },
      { psp: "", type: "Fee", currency: "EUR", debit: "0.50", at: "2026-12-01 23:00:00" },
      // The batch's net: 88.20 settled − 5.00 refunded − 1.20 per-record fees − 0.50 Fee.
      { psp: "", type: "MerchantPayout", currency: "EUR", debit: "81.50", at: "2026-12-01 23:30:00" },
    ];
    // Adyen's own fee and payout lines have an empty Psp Reference: the report is taken as Adyen writes it.
    writeFileSync(file, csv(rows));

    const r = await runReconciliation({
      tenantId: tenant.id,
      provider: "adyen",
      source: { kind: "csv", file },
      actor: SYSTEM_ACTOR,
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    // 9.99 posted from the webhook against 9.90 settled: a mismatch for a person. The
    // payout, which no webhook brings, is expected from the report: posted from it,
    // balancing its batch, and neither compared nor missing.
    expect(r.value).toMatchObject({
      compared: 5,
      matched: 3,
      theirsNotOurs: 1,
      oursNotTheirs: 0,
      mismatched: 1,
      casesOpened: 1,
      fetchFailed: 1,
      postedFromSettlement: 1,
      payouts: 1,
      payoutResiduals: 0,
    });
    const missing = await prisma.reconDiscrepancy.findFirstOrThrow({
      where: { tenantId: tenant.id, bucket: "THEIRS_NOT_OURS" },
    });
    expect(missing).toMatchObject({
      reference: neverArrived,
      theirAmount: 4200n,
      state: "FETCH_FAILED",
      note: expect.stringContaining("have the provider resend it"),
    });
    expect(missing.theirLine).toMatchObject({
      format: "adyen",
      header: HEADER,
      line: expect.stringContaining(neverArrived),
    });
    const mismatch = await prisma.reconDiscrepancy.findFirstOrThrow({
      where: { tenantId: tenant.id, bucket: "MISMATCH" },
      include: { case: true },
    });
    expect(mismatch).toMatchObject({
      reference: paid[2],
      theirAmount: 990n,
      ourAmount: 999n,
      case: { kind: "MISMATCH", status: "OPEN" },
    });
    const run = await prisma.reconRun.findUniqueOrThrow({ where: { id: r.value.runId } });
    expect(run.windowFrom.toISOString()).toBe("2026-12-01T09:00:00.000Z"); // 10:00 CET
    expect(await ledgerViolations()).toEqual([]);
  });
});

describe("Adyen's Settlement Details Report as published (fixtures/, 30 columns, BST)", () => {
  const FIXTURE = path.join(import.meta.dirname, "fixtures", "settlement_detail_report_batch_7.csv");
  let fixtureTenant: TestTenant;
  beforeAll(async () => {
    fixtureTenant = await aTenant();
    const hexKey = await anEndpoint(fixtureTenant, "adyen");
    // 10:00, 11:00 and 13:00 BST are 09:00, 10:00 and 12:00 UTC.
    const items = [
      anAdyenItem({
        pspReference: "8815000000000001",
        value: 1130,
        currency: "GBP",
        eventDate: "2026-07-01T09:00:00Z",
      }),
      anAdyenItem({
        pspReference: "8815000000000002",
        value: 2500,
        currency: "GBP",
        eventDate: "2026-07-01T10:00:00Z",
      }),
      anAdyenItem({
        eventCode: "REFUND",
        pspReference: "8815000000000003",
        originalReference: "8815000000000002",
        value: 500,
        currency: "GBP",
        eventDate: "2026-07-01T12:00:00Z",
      }),
    ].map((item) => signedByAdyen(item, hexKey));
    expect(
      (await deliver(webhookRequest(fixtureTenant.slug, "adyen", JSON.stringify(anAdyenBatch(items)), {}))).status,
    ).toBe(200);
    await drainAll();
  });
  const reconcile = (file: string) =>
    runReconciliation({
      tenantId: fixtureTenant.id,
      provider: "adyen",
      source: { kind: "csv", file },
      actor: SYSTEM_ACTOR,
    });

  it("imports a report with Adyen's fee, deposit-correction, invoice-deduction and payout lines (empty Psp Reference), matching every payment and refund and balancing the batch's payout", async () => {
    const r = await reconcile(FIXTURE);
    expect(r).toMatchObject({
      ok: true,
      // The fee, the two corrections and the payout are Adyen's alone: expected from the
      // report and posted from it, never missing, so nothing is a theirs-not-ours.
      value: { compared: 3, matched: 3, theirsNotOurs: 0, oursNotTheirs: 0, mismatched: 0, notReconciled: 0 },
    });
    if (!r.ok) return;
    expect(r.value).toMatchObject({ feesPosted: 3, postedFromSettlement: 3, payouts: 1, payoutResiduals: 0 });
    expect(await prisma.reconDiscrepancy.count({ where: { tenantId: fixtureTenant.id } })).toBe(0);
    await drainAll();
    const posted = await prisma.processedEvent.findMany({
      where: { tenantId: fixtureTenant.id, providerReference: { startsWith: "TallyTestMerchant:batch:7:" } },
      orderBy: { amount: "asc" },
      include: { rawEvent: { select: { source: true } } },
    });
    expect(posted.map((d) => [d.providerReference, d.movementKind, d.amount, d.rawEvent.source])).toEqual([
      ["TallyTestMerchant:batch:7:InvoiceDeduction:INV-2026-06", "ADJUSTMENT", -1200n, "SETTLEMENT"],
      ["TallyTestMerchant:batch:7:Fee:Transaction Fees July 2026", "FEE", 50n, "SETTLEMENT"],
      ["TallyTestMerchant:batch:7:DepositCorrection:", "ADJUSTMENT", 10000n, "SETTLEMENT"],
      ["TallyTestMerchant:batch:7:GBP", "PAYOUT", 11815n, "SETTLEMENT"],
    ]);
    const run = await prisma.reconRun.findUniqueOrThrow({ where: { id: r.value.runId } });
    // 10:00 BST is 09:00 UTC.
    expect(run.windowFrom.toISOString()).toBe("2026-07-01T09:00:00.000Z");
    await drainAll();
  });

  it("reads the TimeZone abbreviations Adyen writes (PST as UTC-8), and refuses an unknown one naming it", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tally-adyen-tz-"));
    const text = readFileSync(FIXTURE, "utf8");
    // The same report written by a Pacific-time account: 01:00 PST is 09:00 UTC.
    const pst = path.join(dir, "pst.csv");
    writeFileSync(pst, text.replace(",2026-07-01 10:00:00,BST,", ",2026-07-01 01:00:00,PST,"));
    const r = await reconcile(pst);
    // The payments, refund, corrections and payout, all posted by the first import by now.
    expect(r).toMatchObject({ ok: true, value: { matched: 6, theirsNotOurs: 0, feesPosted: 0 } });
    if (r.ok)
      expect((await prisma.reconRun.findUniqueOrThrow({ where: { id: r.value.runId } })).windowFrom.toISOString()).toBe(
        "2026-07-01T09:00:00.000Z",
      );
    const unknown = path.join(dir, "unknown.csv");
    writeFileSync(unknown, text.replace(",BST,Settled,", ",XYZT,Settled,"));
    expect(await reconcile(unknown)).toMatchObject({
      ok: false,
      reason: "malformed_report",
      message: expect.stringContaining('column "TimeZone": unknown time zone "XYZT"'),
    });
  });

  it("posts a dispute's CHARGEBACK and CHARGEBACK_REVERSED webhooks to disputes:adyen, and matches the report's Chargeback and ChargebackReversed records to them", async () => {
    const payment = aPspReference();
    const dispute = aPspReference();
    const at = (h: number) => `2026-12-03T${String(h).padStart(2, "0")}:00:00+01:00`;
    const items = [
      anAdyenItem({ pspReference: payment, value: 4000, currency: "EUR", eventDate: at(9) }),
      anAdyenItem({
        eventCode: "NOTIFICATION_OF_CHARGEBACK",
        pspReference: dispute,
        originalReference: payment,
        value: 4000,
        currency: "EUR",
        eventDate: at(10),
      }),
      anAdyenItem({
        eventCode: "CHARGEBACK",
        pspReference: dispute,
        originalReference: payment,
        value: 4000,
        currency: "EUR",
        eventDate: at(11),
      }),
      anAdyenItem({
        eventCode: "CHARGEBACK_REVERSED",
        pspReference: dispute,
        originalReference: payment,
        value: 4000,
        currency: "EUR",
        eventDate: at(12),
      }),
    ].map((item) => signedByAdyen(item, key));
    expect((await deliver(webhookRequest(tenant.slug, "adyen", JSON.stringify(anAdyenBatch(items)), {}))).status).toBe(
      200,
    );
    await drainAll();
    const kinds = await prisma.posting.findMany({
      where: { tenantId: tenant.id, providerReference: { startsWith: dispute } },
      select: {
        kind: true,
        providerReference: true,
        entries: { select: { amount: true, account: { select: { code: true } } } },
      },
      orderBy: { id: "asc" },
    });
    expect(
      kinds.map((p) => [
        p.kind,
        p.providerReference,
        p.entries.find((e) => e.account.code === "disputes:adyen")?.amount,
      ]),
    ).toEqual([
      ["DISPUTE", dispute, 4000n],
      ["DISPUTE_REVERSAL", `${dispute}:reinstated`, -4000n],
    ]);

    const file = path.join(
      mkdtempSync(path.join(os.tmpdir(), "tally-adyen-")),
      "settlement_detail_report_batch_43.csv",
    );
    writeFileSync(
      file,
      csv([
        { psp: payment, type: "Settled", currency: "EUR", credit: "40.00", at: "2026-12-03 09:00:00" },
        {
          psp: payment,
          type: "Chargeback",
          modification: dispute,
          currency: "EUR",
          debit: "40.00",
          at: "2026-12-03 11:00:00",
        },
        {
          psp: payment,
          type: "ChargebackReversed",
          modification: dispute,
          currency: "EUR",
          credit: "40.00",
          at: "2026-12-03 12:00:00",
        },
      ]),
    );
    const r = await runReconciliation({
      tenantId: tenant.id,
      provider: "adyen",
      source: { kind: "csv", file },
      actor: SYSTEM_ACTOR,
    });
    expect(r).toMatchObject({
      ok: true,
      value: { compared: 3, matched: 3, theirsNotOurs: 0, oursNotTheirs: 0, mismatched: 0, notReconciled: 0 },
    });
    // Each record's commission, scheme fees and interchange (0.12 + 0.02 + 0.10 here), posted from the report.
    expect(r.ok && r.value.feesPosted).toBe(3);
    await drainAll();
    const fees = await prisma.ledgerEntry.aggregate({
      where: {
        account: { tenantId: tenant.id, code: "fees:adyen" },
        posting: { providerReference: { startsWith: payment } },
      },
      _sum: { amount: true },
    });
    expect(fees._sum.amount).toBe(24n);
    expect(await ledgerViolations()).toEqual([]);
  });
});
