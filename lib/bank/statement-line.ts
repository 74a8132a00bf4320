// What both statement readers (camt053.ts, csv.ts) hand the import: booked lines
// in signed minor units, and what the file says about itself (accounts, days it
// covers, entries it did not book). A file the readers cannot read exactly is a
// StatementError naming where (line and element, or row and column): refused whole.
import { isIsoCurrency } from "@/lib/ledger/money";

export type StatementLine = {
  /** Where the line is in the file: the entry's ordinal (camt.053, counting every <Ntry>) or the CSV record number. */
  row: number;
  account: string;
  /** The bank's reference of the entry (AcctSvcrRef, else NtryRef; a CSV's reference column). */
  entryRef: string | null;
  /** YYYY-MM-DD, as the bank wrote it. */
  bookingDate: string;
  valueDate: string | null;
  /** Signed minor units: credits positive, debits negative. */
  amount: bigint;
  currency: string;
  /** Every remittance text of the entry, joined with spaces: where a provider writes its payout reference. */
  remittance: string;
  counterparty: string | null;
  reversal: boolean;
};

export type StatementMeta = {
  /** The accounts the file is of, in the order met. */
  accounts: string[];
  currencies: string[];
  /** The days the file covers, both inclusive (the statement's own period, else its booking days). */
  from: string | null;
  to: string | null;
  /** Entries read but not booked (pending, information only), by status. */
  skipped: Record<string, number>;
};

export const emptyMeta = (): StatementMeta => ({ accounts: [], currencies: [], from: null, to: null, skipped: {} });

export class StatementError extends Error {
  constructor(
    /** "line 12, column 7 (<Amt> of entry 3)" or "row 5, column 2". */
    readonly where: string,
    readonly problem: string,
  ) {
    super(`${where}: ${problem}`);
  }
}

/** The longest text one line may carry (its remittance and names together): far beyond any real entry. */
export const MAX_LINE_TEXT = 1 << 20;

/** A real calendar day as YYYY-MM-DD (2026-02-30 is not one), or null. */
export function calendarDay(year: number, month: number, day: number): string | null {
  const d = new Date(Date.UTC(year, month - 1, day));
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return null;
  if (year < 1900 || year > 2999) return null;
  return d.toISOString().slice(0, 10);
}

/** An upper-cased ISO 4217 code, or why it is not one. */
export function currencyCode(text: string): { ok: true; code: string } | { ok: false; error: string } {
  const code = text.trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(code) || !isIsoCurrency(code))
    return { ok: false, error: `${JSON.stringify(text)} is not an ISO 4217 currency code` };
  return { ok: true, code };
}

/** Widens the file's span with a line's day, and notes its account and currency. */
export function noteLine(meta: StatementMeta, line: StatementLine, ownPeriod: boolean): void {
  if (!meta.accounts.includes(line.account)) meta.accounts.push(line.account);
  if (!meta.currencies.includes(line.currency)) meta.currencies.push(line.currency);
  if (ownPeriod) return;
  if (meta.from === null || line.bookingDate < meta.from) meta.from = line.bookingDate;
  if (meta.to === null || line.bookingDate > meta.to) meta.to = line.bookingDate;
}
