// The Settlement Details Report's records that are not payments: the batch's
// MerchantPayout, its fee and correction records (empty Psp Reference, net columns
// only), how each is keyed and signed, and the hostile values refused with row and column.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import { ReportError } from "@/lib/providers/report";
import { REFERENCE_MAX_CHARS } from "@/lib/providers/adyen/report";
import { type AdyenSdrRecord, adyenSettlementBatch, adyenSettlementCsv } from "@/lib/providers/adyen/simulate";
import { readReport } from "@/lib/recon/read-report";
import { runReconciliation } from "@/lib/recon/run";
import type { SettlementLine } from "@/lib/providers/types";
import { aTenant } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { anEndpoint } from "@/dev/testing/provider-builders";

const dir = mkdtempSync(path.join(os.tmpdir(), "tally-adyen-sdr-"));
let files = 0;
const at = Date.parse("2026-07-01T08:00:00Z") / 1000;

async function read(text: string): Promise<SettlementLine[]> {
  const file = path.join(dir, `settlement_detail_report_batch_${++files}.csv`);
  writeFileSync(file, text);
  const lines: SettlementLine[] = [];
  for await (const line of readReport(file, undefined, { header: null, format: "" })) lines.push(line);
  return lines;
}
const refusal = async (text: string) => {
  try {
    await read(text);
  } catch (e) {
    if (e instanceof ReportError) return { row: e.row, column: e.column, message: e.message };
    throw e;
  }
  throw new Error("the report was read");
};

/** A batch record of merchant M, batch 7, in GBP, about no payment. */
const own = (type: string, o: Partial<AdyenSdrRecord> & { debit?: bigint; credit?: bigint } = {}): AdyenSdrRecord => ({
  merchant: "M",
  type,
  at,
  batch: 7,
  net: { currency: "GBP", debit: o.debit, credit: o.credit },
  ...o,
});
const settled: AdyenSdrRecord = {
  merchant: "M",
  type: "Settled",
  at,
  batch: 7,
  psp: "8815000000000001",
  modification: "8815000000000009",
  merchantReference: "acct_a/order-1",
  paymentMethod: "visa",
  gross: { currency: "GBP", credit: 1130n },
  net: { currency: "GBP", credit: 1105n },
  commission: 15n,
  interchange: 10n,
};
const refunded: AdyenSdrRecord = {
  ...settled,
  type: "Refunded",
  modification: "8815000000000003",
  gross: { currency: "GBP", debit: 500n },
  net: { currency: "GBP", debit: 500n },
  commission: undefined,
  interchange: undefined,
};
const view = (l: SettlementLine) => ({ kind: l.kind, reference: l.reference, amount: l.amount, payout: l.payout });

describe("the batch's MerchantPayout", () => {
  it("is a PAYOUT of the Net Debit keyed by merchant account, batch and currency, and every record of the batch names it", async () => {
    const lines = await read(
      adyenSettlementCsv([
        settled,
        refunded,
        own("Fee", { modification: "Transaction Fees July 2026", debit: 50n }),
        own("MerchantPayout", { modification: "TX000000000007XT batch 7, M", debit: 550n }),
      ]),
    );
    expect(lines.map(view)).toEqual([
      { kind: "PAYMENT", reference: "8815000000000001", amount: 1130n, payout: "M:batch:7:GBP" },
      { kind: "REFUND", reference: "8815000000000003", amount: -500n, payout: "M:batch:7:GBP" },
      { kind: "FEE", reference: "M:batch:7:Fee:Transaction Fees July 2026", amount: -50n, payout: "M:batch:7:GBP" },
      { kind: "PAYOUT", reference: "M:batch:7:GBP", amount: -550n, payout: "M:batch:7:GBP" },
    ]);
    const payout = lines[3]!;
    // The report names neither the bank account nor the day it arrives: the day it is
    // booked is the first it can reach the bank (the endpoint's lag covers the rest).
    expect(payout.account).toBeUndefined();
    expect(payout.arrivalDate?.toISOString()).toBe(`${payout.occurredAt.toISOString().slice(0, 10)}T00:00:00.000Z`);
    expect(payout).toMatchObject({ lineId: "M:batch:7:GBP", currency: "GBP" });
    expect(payout.fee).toBeUndefined();
    // 08:00 UTC written as 09:00 CET.
    expect(payout.occurredAt.toISOString()).toBe("2026-07-01T08:00:00.000Z");
    // The settled record's commission and interchange are its fee; each record has a line id of its own.
    expect(lines[0]).toMatchObject({ fee: 25n, lineId: "M:batch:7:Settled:8815000000000009" });
    expect(new Set(lines.map((l) => l.lineId)).size).toBe(4);
  });

  it("keeps two merchant accounts' batches, and one batch's two currencies, apart", async () => {
    const lines = await read(
      adyenSettlementCsv([
        own("MerchantPayout", { debit: 550n }),
        own("MerchantPayout", { debit: 300n, net: { currency: "EUR", debit: 300n } }),
        own("MerchantPayout", { merchant: "N", debit: 100n }),
      ]),
    );
    expect(lines.map((l) => [l.reference, l.currency, l.amount])).toEqual([
      ["M:batch:7:GBP", "GBP", -550n],
      ["M:batch:7:EUR", "EUR", -300n],
      ["N:batch:7:GBP", "GBP", -100n],
    ]);
  });
});

describe("records that are not about one payment", () => {
  it("reads Fee, MiscCosts and PaymentCost as FEE and InvoiceDeduction, DepositCorrection and Balancetransfer as ADJUSTMENT, signed as the balance moved", async () => {
    const lines = await read(
      adyenSettlementCsv([
        own("Fee", { modification: "Transaction Fees July 2026", debit: 50n }),
        // A fee given back is a credit: a negative fee.
        own("Fee", { modification: "Transaction Fees June 2026", credit: 20n }),
        own("MiscCosts", { modification: "Terminal rental", debit: 1500n }),
        own("PaymentCost", { psp: "8815000000000001", debit: 300n }),
        own("InvoiceDeduction", { modification: "Invoice 201111000553", credit: 25022n }),
        own("InvoiceDeduction", { modification: "Invoice 201111000554", debit: 1200n }),
        own("DepositCorrection", { modification: "Deposit Correction", debit: 7893n }),
        own("Balancetransfer", {
          modification: "Balancetransfer",
          modificationMerchantReference: "Balancetransfer to batch 8",
          debit: 419n,
        }),
      ]),
    );
    expect(lines.map((l) => [l.kind, l.reference, l.amount])).toEqual([
      ["FEE", "M:batch:7:Fee:Transaction Fees July 2026", -50n],
      ["FEE", "M:batch:7:Fee:Transaction Fees June 2026", 20n],
      ["FEE", "M:batch:7:MiscCosts:Terminal rental", -1500n],
      ["FEE", "M:batch:7:PaymentCost:8815000000000001", -300n],
      ["ADJUSTMENT", "M:batch:7:InvoiceDeduction:Invoice 201111000553", 25022n],
      ["ADJUSTMENT", "M:batch:7:InvoiceDeduction:Invoice 201111000554", -1200n],
      ["ADJUSTMENT", "M:batch:7:DepositCorrection:Deposit Correction", -7893n],
      ["ADJUSTMENT", "M:batch:7:Balancetransfer:Balancetransfer", -419n],
    ]);
    for (const l of lines) expect(l).toMatchObject({ currency: "GBP", payout: "M:batch:7:GBP", lineId: l.reference });
    // Reconciled now, no longer only listed.
    expect(lines.filter((l) => l.notReconciled !== undefined)).toEqual([]);
    // Their own amount is the fee: no per-record fee on top, which the statement would count twice.
    expect(lines.filter((l) => l.fee !== undefined)).toEqual([]);
  });

  it("keys records that share a Modification Reference in a batch by a counter, the same when the report is read again or generated with another merchant account's records in it", async () => {
    const batch = [
      own("DepositCorrection", { modification: "Deposit Correction", debit: 100n }),
      own("Fee", { modification: "Transaction Fees July 2026", debit: 50n }),
      own("DepositCorrection", { modification: "Deposit Correction", credit: 40n }),
      own("DepositCorrection", { debit: 7n }),
      own("DepositCorrection", { debit: 8n }),
      // The same Fee text in the next batch is another record.
      own("Fee", { batch: 8, modification: "Transaction Fees July 2026", debit: 60n }),
    ];
    const keys = (ls: SettlementLine[]) => ls.filter((l) => l.kind !== "OTHER").map((l) => [l.reference, l.amount]);
    const first = keys(await read(adyenSettlementCsv(batch)));
    expect(first).toEqual([
      ["M:batch:7:DepositCorrection:Deposit Correction", -100n],
      ["M:batch:7:Fee:Transaction Fees July 2026", -50n],
      ["M:batch:7:DepositCorrection:Deposit Correction#2", 40n],
      ["M:batch:7:DepositCorrection:", -7n],
      ["M:batch:7:DepositCorrection:#2", -8n],
      ["M:batch:8:Fee:Transaction Fees July 2026", -60n],
    ]);
    expect(keys(await read(adyenSettlementCsv(batch)))).toEqual(first);
    // A report for two merchant accounts: N's records before and among M's change no key of M's.
    const n = (r: AdyenSdrRecord) => ({ ...r, merchant: "N" });
    const both = keys(await read(adyenSettlementCsv([n(batch[0]!), batch[0]!, n(batch[2]!), ...batch.slice(1)])));
    expect(both.filter(([ref]) => String(ref).startsWith("M:"))).toEqual(first);
    expect(both.filter(([ref]) => String(ref).startsWith("N:")).map(([ref]) => ref)).toEqual([
      "N:batch:7:DepositCorrection:Deposit Correction",
      "N:batch:7:DepositCorrection:Deposit Correction#2",
    ]);
  });

  it("takes a report of these records with an empty Psp Reference as a normal report", async () => {
    const lines = await read(
      adyenSettlementCsv([
        own("Fee", { debit: 50n }),
        own("InvoiceDeduction", { modification: "Invoice 1", debit: 10n }),
        own("MerchantPayout", { debit: 1n }),
      ]),
    );
    expect(lines.map((l) => l.kind)).toEqual(["FEE", "ADJUSTMENT", "PAYOUT"]);
    expect(lines[0]!.reference).toBe("M:batch:7:Fee:");
  });
});

describe("hostile records are refused with their row and column", () => {
  it("a MerchantPayout with a credit", async () => {
    expect(await refusal(adyenSettlementCsv([settled, own("MerchantPayout", { credit: 550n })]))).toMatchObject({
      row: 3,
      column: "Net Credit (NC)",
      message: expect.stringContaining("this one is a credit"),
    });
  });
  it("a MerchantPayout of nothing, or without a batch", async () => {
    expect(await refusal(adyenSettlementCsv([own("MerchantPayout", {})]))).toMatchObject({
      row: 2,
      column: "Net Debit (NC)",
    });
    expect(await refusal(adyenSettlementCsv([own("MerchantPayout", { batch: "", debit: 5n })]))).toMatchObject({
      row: 2,
      column: "Batch Number",
      message: expect.stringContaining("keyed by its batch"),
    });
  });
  it("a batch number that is not one", async () => {
    for (const batch of ["7a", "-7", "0", "7.5"])
      expect(await refusal(adyenSettlementCsv([settled, { ...settled, batch }]))).toMatchObject({
        row: 3,
        column: "Batch Number",
        message: expect.stringContaining(`"${batch}"`),
      });
  });
  it("a Fee in a currency that does not exist, or with an amount the currency cannot have", async () => {
    expect(
      await refusal(adyenSettlementCsv([own("Fee", { debit: 50n, net: { currency: "XYZ", debit: 50n } })])),
    ).toMatchObject({ row: 2, column: "Net Currency", message: expect.stringContaining('"XYZ"') });
    const text = adyenSettlementCsv([own("Fee", { debit: 50n, net: { currency: "JPY", debit: 50n } })]);
    expect(await refusal(text.replace(",JPY,50,", ",JPY,0.50,"))).toMatchObject({
      row: 2,
      column: "Net Debit (NC)",
      message: expect.stringContaining("refusing to round money"),
    });
  });
  it("a Fee or correction that moves nothing, or a negative debit", async () => {
    expect(await refusal(adyenSettlementCsv([own("InvoiceDeduction", { modification: "Invoice 1" })]))).toMatchObject({
      row: 2,
      column: "Net Debit (NC)",
    });
    const text = adyenSettlementCsv([own("Fee", { debit: 50n })]);
    expect(await refusal(text.replace(",GBP,0.50,", ",GBP,-0.50,"))).toMatchObject({
      row: 2,
      column: "Net Debit (NC)",
      message: expect.stringContaining("never negative"),
    });
  });
});

describe("the keys a report makes are bounded and one line", () => {
  /** A merchant account of n characters; its payout key "<it>:batch:7:GBP" is 12 more. */
  const merchantOf = (n: number) => "M".repeat(n);
  const payoutKeyOf = (merchant: string) => `${merchant}:batch:7:GBP`;

  it("refuses a 300-character merchant account on its batch's first record, naming the row, the column and the limit", async () => {
    const merchant = merchantOf(300);
    expect(
      await refusal(
        adyenSettlementCsv([
          { ...settled, merchant: "N" },
          { ...settled, merchant },
          own("MerchantPayout", { merchant, debit: 1n }),
        ]),
      ),
    ).toMatchObject({
      row: 3,
      column: "Merchant Account",
      message: expect.stringContaining(`${REFERENCE_MAX_CHARS} a reference may have`),
    });
  });

  it("reads a payout key at exactly the limit, and refuses one character more", async () => {
    const atLimit = merchantOf(REFERENCE_MAX_CHARS - 12);
    const [payout] = await read(adyenSettlementCsv([own("MerchantPayout", { merchant: atLimit, debit: 1n })]));
    expect(payout!.reference).toBe(payoutKeyOf(atLimit));
    expect(payout!.reference).toHaveLength(REFERENCE_MAX_CHARS);
    expect(
      await refusal(adyenSettlementCsv([own("MerchantPayout", { merchant: `${atLimit}M`, debit: 1n })])),
    ).toMatchObject({ row: 2, column: "Merchant Account" });
  });

  it("bounds a payment's reference with room for its fee's \":fee\", a dispute's with its suffix, and a fee record's key with the batch's", async () => {
    const psp = (n: number) => "8".repeat(n);
    // No fee: the reference itself may take the whole bound.
    const [bare] = await read(
      adyenSettlementCsv([
        { ...settled, psp: psp(REFERENCE_MAX_CHARS), commission: undefined, interchange: undefined },
      ]),
    );
    expect(bare!.reference).toHaveLength(REFERENCE_MAX_CHARS);
    // A fee: "<reference>:fee" is posted from the report, so the reference has four characters fewer.
    const [withFee] = await read(adyenSettlementCsv([{ ...settled, psp: psp(REFERENCE_MAX_CHARS - 4) }]));
    expect(`${withFee!.reference}:fee`).toHaveLength(REFERENCE_MAX_CHARS);
    expect(await refusal(adyenSettlementCsv([{ ...settled, psp: psp(REFERENCE_MAX_CHARS - 3) }]))).toMatchObject({
      row: 2,
      column: "Psp Reference",
      message: expect.stringContaining(":fee"),
    });
    expect(await refusal(adyenSettlementCsv([{ ...settled, psp: psp(REFERENCE_MAX_CHARS + 1) }]))).toMatchObject({
      row: 2,
      column: "Psp Reference",
      message: expect.stringContaining(`over the ${REFERENCE_MAX_CHARS}`),
    });
    // ":reinstated" is part of the dispute reversal's reference.
    const reversal = { ...refunded, type: "ChargebackReversed", gross: { currency: "GBP", credit: 500n } };
    const modification = psp(REFERENCE_MAX_CHARS - ":reinstated".length);
    expect((await read(adyenSettlementCsv([{ ...reversal, modification }])))[0]!.reference).toHaveLength(
      REFERENCE_MAX_CHARS,
    );
    expect(await refusal(adyenSettlementCsv([{ ...reversal, modification: `${modification}8` }]))).toMatchObject({
      row: 2,
      column: "Modification Reference",
    });
    // "M:batch:7:Fee:" is 14 characters of the fee record's key.
    const text = "x".repeat(REFERENCE_MAX_CHARS - 14);
    expect(
      (await read(adyenSettlementCsv([own("Fee", { modification: text, debit: 5n })])))[0]!.reference,
    ).toHaveLength(REFERENCE_MAX_CHARS);
    expect(
      await refusal(
        adyenSettlementCsv([
          own("Fee", { modification: text, debit: 5n }),
          own("Fee", { modification: text, debit: 5n }),
        ]),
      ),
    ).toMatchObject({ row: 3, column: "Modification Reference", message: expect.stringContaining("257 characters") });
  });

  it("refuses an unknown Type or a reference longer than any key may be, on a record no key of which is posted", async () => {
    expect(await refusal(adyenSettlementCsv([{ ...settled, type: "T".repeat(65) }]))).toMatchObject({
      row: 2,
      column: "Type",
    });
    expect(
      await refusal(
        adyenSettlementCsv([{ ...settled, type: "ManualCorrected", psp: "8".repeat(REFERENCE_MAX_CHARS + 1) }]),
      ),
    ).toMatchObject({ row: 2, column: "Psp Reference" });
  });

  it("refuses a control character in any column a key is made of, a quoted line break too", async () => {
    const cases: [string, AdyenSdrRecord, string][] = [
      ["Merchant Account", { ...settled, merchant: "M\nForged" }, "000A"],
      ["Psp Reference", { ...settled, psp: "8815\u0001000000000001" }, "0001"],
      ["Modification Reference", own("Fee", { modification: "Transaction\tFees", debit: 5n }), "0009"],
      ["Modification Reference", own("MerchantPayout", { modification: "TX7\u001b[2J batch 7, M", debit: 5n }), "001B"],
      ["Psp Reference", { ...settled, psp: "8815\u0085000000000001" }, "0085"],
    ];
    for (const [column, record, code] of cases)
      expect(await refusal(adyenSettlementCsv([settled, record]))).toMatchObject({
        row: 3,
        column,
        message: expect.stringContaining(`control character (U+${code})`),
      });
    // A space inside a reference is text, not a control character.
    const [fee] = await read(
      adyenSettlementCsv([own("Fee", { modification: "Transaction Fees July 2026", debit: 5n })]),
    );
    expect(fee!.reference).toBe("M:batch:7:Fee:Transaction Fees July 2026");
  });

  it("refuses an uploaded report with a 300-character merchant account whole, storing nothing, and posts a payout keyed at exactly the limit", async () => {
    const tenant = await aTenant();
    await anEndpoint(tenant, "adyen");
    const reconcile = (records: AdyenSdrRecord[]) => {
      const file = path.join(dir, `settlement_detail_report_batch_${++files}.csv`);
      writeFileSync(file, adyenSettlementCsv(records));
      return runReconciliation({
        tenantId: tenant.id,
        provider: "adyen",
        source: { kind: "csv", file },
        actor: SYSTEM_ACTOR,
      });
    };
    const long = merchantOf(300);
    const refused = await reconcile([
      own("MerchantPayout", { debit: 100n }),
      own("InvoiceDeduction", { merchant: long, modification: "Invoice 1", credit: 100n }),
      own("MerchantPayout", { merchant: long, debit: 100n }),
    ]);
    expect(refused).toMatchObject({
      ok: false,
      reason: "malformed_report",
      message: expect.stringMatching(/^Report refused, nothing imported: row 3, column "Merchant Account": too long/),
    });
    await drainAll();
    expect(await prisma.rawEvent.count({ where: { tenantId: tenant.id } })).toBe(0);
    expect(await prisma.reconDiscrepancy.count({ where: { tenantId: tenant.id } })).toBe(0);
    expect(await prisma.payout.count({ where: { tenantId: tenant.id } })).toBe(0);
    expect(await prisma.reconRun.findFirstOrThrow({ where: { tenantId: tenant.id } })).toMatchObject({
      status: "FAILED",
    });

    // The bound is the worker's: a payout key of exactly REFERENCE_MAX_CHARS is posted, not failed.
    const atLimit = merchantOf(REFERENCE_MAX_CHARS - 12);
    const ran = await reconcile([own("MerchantPayout", { merchant: atLimit, debit: 100n })]);
    expect(ran).toMatchObject({ ok: true, value: { postedFromSettlement: 1 } });
    await drainAll();
    const events = await prisma.rawEvent.findMany({ where: { tenantId: tenant.id }, select: { status: true } });
    expect(events).toEqual([{ status: "DONE" }]);
    expect(await prisma.payout.findFirstOrThrow({ where: { tenantId: tenant.id } })).toMatchObject({
      reference: payoutKeyOf(atLimit),
      ourAmount: 100n,
    });
  });
});

describe("the simulator's report", () => {
  it("carries a batch whose costs exceed its sales to the next batch, as a Balancetransfer credit and no payout", async () => {
    const refund = {
      tenant: "t",
      provider: "adyen" as const,
      kind: "REFUND" as const,
      reference: "8815000000000077",
      paymentReference: "8815000000000001",
      account: "acct_a",
      amount: 2_000,
      currency: "EUR",
      created: at,
    };
    const batch = adyenSettlementBatch([refund], { batch: 9, closedAt: at + 3600, merchant: "M" });
    expect(batch.payouts).toEqual([]);
    expect(batch.carried).toEqual([{ currency: "EUR", amount: 2_050n }]);
    const lines = await read(batch.csv);
    expect(lines.map((l) => [l.kind, l.reference, l.amount])).toEqual([
      ["REFUND", "8815000000000077", -2_000n],
      ["FEE", "M:batch:9:Fee:Transaction Fees July 2026", -50n],
      ["ADJUSTMENT", "M:batch:9:Balancetransfer:Balancetransfer", 2_050n],
    ]);
  });
});
