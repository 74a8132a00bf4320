// The Settlement Details Report's records that are not payments: the batch's
// MerchantPayout, its fee and correction records (empty Psp Reference, net columns
// only), how each is keyed and signed, and the hostile values refused with row and column.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ReportError } from "@/lib/providers/report";
import { type AdyenSdrRecord, adyenSettlementBatch, adyenSettlementCsv } from "@/lib/providers/adyen/simulate";
import { readReport } from "@/lib/recon/read-report";
import type { SettlementLine } from "@/lib/providers/types";

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
    // The report names neither the bank account nor the day it arrives.
    expect(payout.account).toBeUndefined();
    expect(payout.arrivalDate).toBeUndefined();
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
