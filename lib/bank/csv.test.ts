import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { decimalOf, parseDay, parseLayout, readStatementCsv } from "@/lib/bank/csv";
import { emptyMeta, StatementError, type StatementLine } from "@/lib/bank/statement-line";

function layoutOf(input: Record<string, unknown>) {
  const r = parseLayout(input);
  if (!r.ok) throw new Error(r.message);
  return r.layout;
}

async function read(text: string, layout: Record<string, unknown>) {
  const meta = emptyMeta();
  const lines: StatementLine[] = [];
  for await (const l of readStatementCsv(Readable.from([Buffer.from(text)]), layoutOf(layout), meta)) lines.push(l);
  return { lines, meta };
}

async function refusal(text: string, layout: Record<string, unknown>): Promise<string> {
  try {
    await read(text, layout);
  } catch (error) {
    if (error instanceof StatementError) return error.message;
    throw error;
  }
  throw new Error("the file was not refused");
}

// A German bank's export: a preamble (found past, blank lines and all), ";" between fields, DD.MM.YYYY, "," decimals
// and "." thousands, one signed amount, the currency in a column.
const GERMAN = {
  account: "Hausbank Giro",
  delimiter: ";",
  dateColumn: "Buchungstag",
  dateFormat: "DD.MM.YYYY",
  valueDateColumn: "Valuta",
  amountColumn: "Betrag",
  decimalSeparator: ",",
  thousandsSeparator: ".",
  currencyColumn: "Währung",
  remittanceColumns: ["Verwendungszweck", "Buchungstext"],
  referenceColumn: "Referenz",
  counterpartyColumn: "Auftraggeber/Empfänger",
};
const german = [
  "Kontoauszug;;;;;;;",
  "Konto;DE89370400440532013000;;;;;;",
  "",
  "Buchungstag;Valuta;Auftraggeber/Empfänger;Buchungstext;Verwendungszweck;Betrag;Währung;Referenz",
  '02.12.2026;03.12.2026;STRIPE PAYMENTS EUROPE;Gutschrift;"STRIPE; PAYOUT po_1QZX";1.234.567,89;EUR;R-1',
  "02.12.2026;;Hausbank AG;Entgelt;Kontoführung;-2,50;eur;",
  ";;;;;;;",
  "31.12.2026;31.12.2026;ADYEN N.V.;Gutschrift;ADYEN PAYOUT 4411;12,50-;EUR;R-3",
].join("\r\n");

// A US bank's export: ",", MM/DD/YYYY, separate credit and debit columns, one currency.
const US = {
  account: "Checking 0042",
  dateColumn: 1,
  dateFormat: "MM/DD/YYYY",
  creditColumn: "Credit",
  debitColumn: "Debit",
  thousandsSeparator: ",",
  currency: "usd",
  remittanceColumns: ["Description"],
};
const us = [
  "Date,Description,Debit,Credit",
  '12/02/2026,"STRIPE TRANSFER, po_1AB",,"1,250.00"',
  "12/03/2026,WIRE FEE,15.00,",
  "12/04/2026,REFUND,-3.10,",
].join("\n");

describe("reading a CSV statement in the bank's layout", () => {
  it("reads a German export: preamble, semicolons, decimal commas, thousands dots, signs before or after", async () => {
    const { lines, meta } = await read(german, GERMAN);
    expect(lines).toEqual([
      {
        row: 4,
        account: "Hausbank Giro",
        entryRef: "R-1",
        bookingDate: "2026-12-02",
        valueDate: "2026-12-03",
        amount: 123456789n,
        currency: "EUR",
        remittance: "STRIPE; PAYOUT po_1QZX Gutschrift",
        counterparty: "STRIPE PAYMENTS EUROPE",
        reversal: false,
      },
      expect.objectContaining({ row: 5, amount: -250n, currency: "EUR", valueDate: null, entryRef: null }),
      expect.objectContaining({ row: 7, amount: -1250n, bookingDate: "2026-12-31" }),
    ]);
    expect(meta).toEqual({
      accounts: ["Hausbank Giro"],
      currencies: ["EUR"],
      from: "2026-12-02",
      to: "2026-12-31",
      skipped: {},
    });
  });

  it("reads a US export: credit and debit columns (a debit's sign either way), a fixed currency, columns by number", async () => {
    const { lines } = await read(us, US);
    expect(lines.map((l) => [l.row, l.bookingDate, l.amount, l.currency, l.remittance])).toEqual([
      [2, "2026-12-02", 125000n, "USD", "STRIPE TRANSFER, po_1AB"],
      [3, "2026-12-03", -1500n, "USD", "WIRE FEE"],
      [4, "2026-12-04", -310n, "USD", "REFUND"],
    ]);
  });

  it("reads dates and amounts exactly as the layout says, and nothing else", () => {
    expect(parseDay("2026-12-01", "YYYY-MM-DD")).toBe("2026-12-01");
    expect(parseDay("01/12/2026", "DD/MM/YYYY")).toBe("2026-12-01");
    expect(parseDay("12/01/2026", "MM/DD/YYYY")).toBe("2026-12-01");
    expect(parseDay("29.02.2027", "DD.MM.YYYY")).toBeNull();
    expect(parseDay("2026-12-01", "DD.MM.YYYY")).toBeNull();
    expect(decimalOf("1.234,56", ",", ".")).toEqual({ ok: true, decimal: "1234.56" });
    expect(decimalOf("1 234,56", ",", " ")).toEqual({ ok: true, decimal: "1234.56" });
    expect(decimalOf("1\u00a0234,56", ",", " ")).toEqual({ ok: true, decimal: "1234.56" });
    expect(decimalOf("1'234.56", ".", "'")).toEqual({ ok: true, decimal: "1234.56" });
    expect(decimalOf("\u22125.00", ".", "")).toEqual({ ok: true, decimal: "-5.00" });
    expect(decimalOf("1.2.3", ",", ".")).toMatchObject({ ok: false });
    expect(decimalOf("1,234.56", ".", "")).toMatchObject({ ok: false });
    expect(decimalOf("12,3456.00", ".", ",")).toMatchObject({ ok: false });
    expect(decimalOf("", ".", "")).toMatchObject({ ok: false });
  });
});

describe("refusing a CSV statement the layout cannot read exactly, naming row and column", () => {
  it("refuses a date that is not one, and an amount that is not in the layout's format", async () => {
    expect(await refusal(german.replace("31.12.2026;31.12.2026", "31.02.2026;31.12.2026"), GERMAN)).toBe(
      'row 7, column 1: "31.02.2026" is not a date in DD.MM.YYYY',
    );
    expect(await refusal(german.replace("-2,50", "-2.50"), GERMAN)).toBe(
      'row 5, column 6: "-2.50" is not an amount in this layout (decimal separator ",", thousands separator ".")',
    );
    expect(await refusal(german.replace("-2,50", "-2,505"), GERMAN)).toBe(
      "row 5, column 6: -2.505 EUR has more than 2 decimal places; refusing to round money",
    );
    expect(await refusal(german.replace(";eur;", ";EURO;"), GERMAN)).toBe(
      'row 5, column 7: "EURO" is not an ISO 4217 currency code',
    );
    expect(await refusal(us.replace(',"1,250.00"', ',"1,250.00"').replace("15.00,", "15.00,2.00"), US)).toBe(
      "row 3, column 4: the row has both a credit and a debit amount; a statement line is one or the other",
    );
    expect(await refusal(us.replace("15.00,", ","), US)).toBe(
      "row 3, column 4: the row has neither a credit nor a debit amount",
    );
    expect(await refusal(`${us}\n12/05/2026,SHORT`, US)).toBe(
      "row 5, column 4: the row has 2 columns; the layout reads column 4",
    );
  });

  it("refuses a header without the layout's columns, broken quoting and binary bytes", async () => {
    expect(await refusal(german.replace(";Betrag;", ";Amount;"), GERMAN)).toMatch(
      /^row 3: the header has no column "Betrag" \(amountColumn\); it has "Buchungstag", "Valuta", .*"Amount"/,
    );
    expect(await refusal(german.replace('"STRIPE; PAYOUT po_1QZX"', '"STRIPE; PAYOUT po_1QZX'), GERMAN)).toMatch(
      /^row \d+(, column \d+)?: a quoted field is never closed/,
    );
    expect(await refusal(us.replace("WIRE FEE", "WIRE\u0000FEE"), US)).toBe(
      "row 3, column 2: contains a NUL byte (is this a binary file?)",
    );
    expect(await refusal("", GERMAN)).toMatch(
      /^row 1: no header: none of the first 50 rows has the columns "buchungstag", /,
    );
  });

  it("refuses a layout that cannot work, naming the field", () => {
    const bad = (patch: Record<string, unknown>) => {
      const r = parseLayout({ ...US, ...patch });
      return r.ok ? "accepted" : r.message;
    };
    expect(bad({ amountColumn: "Amount" })).toMatch(
      /amountColumn: give amountColumn or creditColumn and debitColumn, not both/,
    );
    expect(bad({ debitColumn: undefined })).toMatch(/debitColumn: the amount needs amountColumn, or both/);
    expect(bad({ currencyColumn: "Ccy" })).toMatch(/currency: give currencyColumn or a fixed currency, exactly one/);
    expect(bad({ currency: "EURO" })).toMatch(/currency: must be an ISO 4217 currency code/);
    expect(bad({ decimalSeparator: ",", thousandsSeparator: "," })).toMatch(
      /thousandsSeparator: the thousands separator cannot be/,
    );
    expect(bad({ dateFormat: "D/M/YY" })).toMatch(/dateFormat: /);
    expect(bad({ skipRows: 1 })).toMatch(/skipRows: with named columns the header is found by its names/);
    expect(bad({ delimiter: "ab" })).toMatch(/delimiter: /);
    expect(bad({ amountColum: 3 })).toMatch(/Unrecognized key.*amountColum/);
  });
});
