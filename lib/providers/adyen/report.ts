// Adyen's Settlement Details Report, matched by header name. One report is one
// settlement batch of one merchant account (or several, when generated for many);
// every record carries its Merchant Account and Batch Number.
//
// - Settled and Refunded records are the movements webhooks post (a refund keyed by its
//   Modification Reference, the refund's own pspReference); RefundedReversed nets its
//   refund back to zero (a refund that did not reach the shopper is a mismatch) and is
//   listed as not reconciled. Chargeback and SecondChargeback are a dispute's
//   withdrawals, ChargebackReversed its reinstatement, keyed by the dispute's
//   pspReference (the Modification Reference; Psp Reference is the disputed payment's)
//   as ./parse.ts keys CHARGEBACK, SECOND_CHARGEBACK (":second") and CHARGEBACK_REVERSED
//   (":reinstated"). A record's commission, markup, scheme fees and interchange (net
//   currency) are its fee, posted from the report like Stripe's.
// - MerchantPayout is the batch's payout to the bank: a PAYOUT of its Net Debit, keyed
//   "<merchant account>:batch:<batch number>:<net currency>", and every record of that
//   batch in that currency carries it as `payout`, so the payout's statement groups them.
//   Not the Modification Reference: Adyen writes there the payout description it sends
//   to the bank ("TX123456789123XT batch 4, TestMerchant" by default), text a merchant
//   can have reconfigured, and it is on the payout's own record only, which comes last,
//   while the records before it must name their payout as they are read. The merchant
//   account and batch number are on every record and never change once the batch has
//   closed (the file is settlement_detail_report_batch_<n>.csv); the currency keeps two
//   payouts of one batch apart when it settles in two. The report names no bank account
//   (the payout goes to bank:(unknown)) and no arrival date: the payout's is the UTC day
//   its record was booked, the first day the transfer can reach the bank, and the
//   endpoint's date lag covers its time in transit; without one the bank step could
//   neither match it by amount and date nor tell when it is overdue. The
//   Modification Reference is the payout's bankReference instead: the key never reaches
//   the bank, that text does, and the bank step looks for it in a credit's remittance
//   (trimmed; empty leaves it unset; longer than BANK_REFERENCE_MAX_CHARS is refused).
// - Records not about one payment, read from their net columns (Adyen leaves the gross
//   ones and Psp Reference empty): Fee (the month's transaction fees), MiscCosts and
//   PaymentCost (a cost booked against a payment, e.g. Klarna's late-return fee) are FEE,
//   positive when charged (a credit gives back: negative); InvoiceDeduction (the month's
//   invoice corrected), DepositCorrection (the deposit Adyen holds changed) and
//   Balancetransfer are ADJUSTMENT, signed as the balance moved. A Balancetransfer carries
//   a batch's balance to the next batch or to another merchant account of the company:
//   money that stays at Adyen, but it is part of what the receiving batch pays out, so
//   leaving it out would make every carried-over batch a payout residual. Posted as an
//   adjustment, each half takes its own batch's balance to what that batch paid out, and
//   the two halves cancel in adjustments:adyen once both batches are reconciled.
//   Their Modification Reference is not unique ("Transaction Fees July 2026" is in every
//   batch with July's payments, "Balancetransfer" is every transfer's), so each is keyed
//   "<batch key>:<Type>:<Modification Reference, else Psp Reference>", with "#2", "#3"…
//   for a second and third record of the same key in the batch. Stable: the same report
//   read again or downloaded again lists the same records in the same order, and nothing
//   else in the file moves the count (a row number alone would shift when the report is
//   generated for several merchant accounts or batches at once, or gains a record).
// - The line id (kept per payout) is the same key for every record: "<batch key>:<Type>:
//   <Modification Reference, else Psp Reference>" with the counter.
// - Every key a record makes (reference, its ":fee", payout, line id) is built from its
//   Merchant Account, Psp Reference, Modification Reference and Type, so those are bounded
//   here, at read: a reference over REFERENCE_MAX_CHARS (with ":fee" when the record has a
//   fee, and the payout key "<merchant account>:batch:<n>:<currency>" of every record of a
//   batch) is refused naming its row and column, and so is a control character in any of
//   the four (a CSV field may quote a line break, and a key is printed, logged and exported
//   as one line). Otherwise the file is read, the run commits, and only the worker finds
//   the posting it cannot make: one failed event per record, the rest of the report in.
// Creation Date is in the zone named by TimeZone, an abbreviation (./timezones.ts).
import { isIsoCurrency, MAX_MINOR_UNITS } from "@/lib/ledger/money";
import { cell, dateTime, money, ReportError, type ReportParser } from "@/lib/providers/report";
import { adyenZoneOffset, knownAdyenZones } from "@/lib/providers/adyen/timezones";
import { BANK_REFERENCE_MAX_CHARS, type SettlementLine } from "@/lib/providers/types";

/**
 * The longest reference a report may make: what a settlement movement's reference may be
 * (lib/recon/settlement-movement.ts), the body the worker posts a FEE, DISPUTE, ADJUSTMENT or
 * PAYOUT line from; report.test.ts holds the two to the same figure.
 */
export const REFERENCE_MAX_CHARS = 255;
/**
 * A Type is one of Adyen's record type names, short words ("SecondChargeback"); an unknown one is
 * kept in its line id, which a unique index holds (payout_lines), so it is bounded too: with a
 * reference and a batch key at their bounds the line id stays within a btree row (2704 bytes)
 * even in four-byte characters.
 */
const TYPE_MAX_CHARS = 64;
/** The columns a record's keys are made of. */
const KEY_COLUMNS = ["Merchant Account", "Psp Reference", "Modification Reference", "Type"] as const;

const FEE_COLUMNS = ["Commission (NC)", "Markup (NC)", "Scheme Fees (NC)", "Interchange (NC)"] as const;

/** Records about one payment, by Type (lower case). */
const TRANSACTIONS: Record<string, { kind: "PAYMENT" | "REFUND" | "DISPUTE" | "DISPUTE_REVERSAL"; suffix?: string }> = {
  settled: { kind: "PAYMENT" },
  settledbulk: { kind: "PAYMENT" },
  refunded: { kind: "REFUND" },
  refundedbulk: { kind: "REFUND" },
  refundedreversed: { kind: "REFUND" },
  chargeback: { kind: "DISPUTE", suffix: "" },
  secondchargeback: { kind: "DISPUTE", suffix: ":second" },
  chargebackreversed: { kind: "DISPUTE_REVERSAL", suffix: ":reinstated" },
};

/** Records that move the balance but not for one payment, by Type (lower case), with the name keys use. */
const STANDALONE: Record<string, { kind: "FEE" | "ADJUSTMENT"; name: string }> = {
  fee: { kind: "FEE", name: "Fee" },
  misccosts: { kind: "FEE", name: "MiscCosts" },
  paymentcost: { kind: "FEE", name: "PaymentCost" },
  invoicededuction: { kind: "ADJUSTMENT", name: "InvoiceDeduction" },
  depositcorrection: { kind: "ADJUSTMENT", name: "DepositCorrection" },
  balancetransfer: { kind: "ADJUSTMENT", name: "Balancetransfer" },
};

/** An ISO 4217 code (Node's list), upper case; a three-letter code no currency has is refused too. */
function isoCurrency(row: number, column: string, text: string): string {
  const code = text.toUpperCase();
  if (!/^[A-Z]{3}$/.test(code) || !isIsoCurrency(code))
    throw new ReportError(row, column, `not an ISO 4217 currency code: "${text}"`);
  return code;
}

function amount(row: number, column: string, text: string, currency: string): bigint {
  const value = money(row, column, text, currency);
  if (value < 0n) throw new ReportError(row, column, `a debit or credit column is never negative: "${text}"`);
  if (value > MAX_MINOR_UNITS) throw new ReportError(row, column, `beyond the largest amount the ledger accepts`);
  return value;
}

/**
 * A record on the balance's side: what Adyen kept for it (its commission, markup, scheme
 * fees and interchange, in the net currency, positive when charged) and its gross there
 * (its net plus those fees), which is the payout's side of a record the shopper paid in
 * another currency. Null when the report has no net currency for it.
 */
function settledSideOf(
  row: number,
  get: (name: string) => string,
): { fee: bigint; gross: bigint; currency: string } | null {
  const nc = get("Net Currency");
  if (nc === "") return null;
  const currency = isoCurrency(row, "Net Currency", nc);
  let fee = 0n;
  for (const column of FEE_COLUMNS) fee += money(row, column, get(column), currency);
  const net =
    amount(row, "Net Credit (NC)", get("Net Credit (NC)"), currency) -
    amount(row, "Net Debit (NC)", get("Net Debit (NC)"), currency);
  return { fee, gross: net + fee, currency };
}

/** The text a key is made of: no control character, and not longer than the key it makes may be. */
function keyText(row: number, column: (typeof KEY_COLUMNS)[number], text: string, isPayout: boolean): void {
  const control = /\p{Cc}/u.exec(text);
  if (control)
    throw new ReportError(
      row,
      column,
      `holds a control character (U+${control[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}), which no key may carry`,
    );
  // A merchant account is bounded by its batch's payout key, a MerchantPayout's Modification
  // Reference as its bank text (not a key): both below.
  if (column === "Merchant Account" || (column === "Modification Reference" && isPayout)) return;
  const [max, what] = column === "Type" ? [TYPE_MAX_CHARS, "a record type"] : [REFERENCE_MAX_CHARS, "a reference"];
  if (text.length > max)
    throw new ReportError(row, column, `${text.length} characters, over the ${max} ${what} may have`);
}

/** A key at most REFERENCE_MAX_CHARS long, else the record is refused naming the column that made it long. */
function bounded(row: number, column: string, key: string, what: string): string {
  if (key.length > REFERENCE_MAX_CHARS)
    throw new ReportError(
      row,
      column,
      `too long to key ${what}: ${key.length} characters, over the ${REFERENCE_MAX_CHARS} a reference may have`,
    );
  return key;
}

export const adyenReport: ReportParser = {
  format: "adyen",
  description: "Adyen's Settlement Details Report",
  required: [
    "Merchant Account",
    "Psp Reference",
    "Merchant Reference",
    "Type",
    "Creation Date",
    "Gross Currency",
    "Gross Debit (GC)",
    "Gross Credit (GC)",
    "Batch Number",
  ],
  detect: (names) => names.has("Psp Reference") && names.has("Batch Number"),
  mapper(columns) {
    // How many records of each key this report has had so far: the counter of a key's
    // second and later records (one mapper reads one report, row by row, in order).
    const seen = new Map<string, number>();
    const counted = (key: string) => {
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      return n === 1 ? key : `${key}#${n}`;
    };
    return (row, fields, raw): SettlementLine => {
      const get = (name: string) => cell(columns, fields, name);
      const type = get("Type");
      if (!type) throw new ReportError(row, "Type", "empty");
      const payout = /^MerchantPayout$/i.test(type);
      for (const column of KEY_COLUMNS) keyText(row, column, get(column), payout);
      const zone = get("TimeZone");
      const offset = zone === "" ? "Z" : adyenZoneOffset(zone);
      if (offset === null)
        throw new ReportError(
          row,
          "TimeZone",
          `unknown time zone "${zone}" (known: ${knownAdyenZones()}, or an offset like +01:00)`,
        );
      const occurredAt = dateTime(row, "Creation Date", get("Creation Date"), offset);
      const transaction = TRANSACTIONS[type.toLowerCase()];
      const standalone = STANDALONE[type.toLowerCase()];

      const batchText = get("Batch Number");
      if (batchText !== "" && !/^[1-9][0-9]{0,17}$/.test(batchText))
        throw new ReportError(row, "Batch Number", `not a batch number (a positive whole number): "${batchText}"`);
      const merchant = get("Merchant Account");
      if (!merchant) throw new ReportError(row, "Merchant Account", "empty");
      const batch = batchText === "" ? null : `${merchant}:batch:${batchText}`;
      // Every record of a batch names the batch's payout, "<batch>:<currency>" (three letters):
      // a merchant account too long for it is refused on its first record, not on the payout's, last.
      if (batch)
        bounded(
          row,
          "Merchant Account",
          `${batch}:XXX`,
          `its batch's payout ("<merchant account>:batch:${batchText}:<currency>")`,
        );
      if (!batch && (payout || standalone))
        throw new ReportError(row, "Batch Number", `empty: a ${type} record is keyed by its batch`);

      // Payments, refunds and disputes are in the shopper's (gross) currency, the posting's;
      // the batch's own records (payout, fees, corrections) in the balance's (net) one.
      const side = transaction || get("Net Currency") === "" ? "GC" : "NC";
      const [currencyColumn, creditColumn, debitColumn] =
        side === "GC"
          ? (["Gross Currency", "Gross Credit (GC)", "Gross Debit (GC)"] as const)
          : (["Net Currency", "Net Credit (NC)", "Net Debit (NC)"] as const);
      const currency = isoCurrency(row, currencyColumn, get(currencyColumn));
      const credit = amount(row, creditColumn, get(creditColumn), currency);
      const debit = amount(row, debitColumn, get(debitColumn), currency);
      const net = get("Net Currency") === "" ? null : isoCurrency(row, "Net Currency", get("Net Currency"));
      const payoutOf = batch && net ? `${batch}:${net}` : undefined;

      if (payout) {
        if (credit !== 0n)
          throw new ReportError(
            row,
            creditColumn,
            "a MerchantPayout is money leaving Adyen for the bank, a Net Debit; this one is a credit",
          );
        if (debit === 0n) throw new ReportError(row, debitColumn, "empty: a MerchantPayout needs the amount paid out");
        const reference = `${batch}:${currency}`;
        const bankReference = get("Modification Reference");
        if (bankReference.length > BANK_REFERENCE_MAX_CHARS)
          throw new ReportError(
            row,
            "Modification Reference",
            `a MerchantPayout's bank transfer description over ${BANK_REFERENCE_MAX_CHARS} characters`,
          );
        return {
          row,
          reference,
          kind: "PAYOUT",
          amount: -debit,
          currency,
          occurredAt,
          raw,
          payout: reference,
          lineId: reference,
          arrivalDate: new Date(`${occurredAt.toISOString().slice(0, 10)}T00:00:00Z`),
          ...(bankReference && { bankReference }),
        };
      }

      if (standalone) {
        if (credit === 0n && debit === 0n)
          throw new ReportError(row, debitColumn, `empty: a ${type} record moves money, a debit or a credit`);
        const named = get("Modification Reference") ? "Modification Reference" : "Psp Reference";
        const reference = bounded(
          row,
          named,
          counted(`${batch}:${standalone.name}:${get(named)}`),
          `the record ("<batch>:${standalone.name}:<${named}>")`,
        );
        return {
          row,
          reference,
          kind: standalone.kind,
          // Signed as the balance moved: a fee charged is a debit, so negative, like a refund's.
          amount: credit - debit,
          currency,
          occurredAt,
          raw,
          lineId: reference,
          ...(payoutOf && { payout: payoutOf }),
        };
      }

      const lineId = batch
        ? counted(`${batch}:${type}:${get("Modification Reference") || get("Psp Reference")}`)
        : null;
      if (!transaction)
        return {
          row,
          reference: get("Psp Reference") || get("Modification Reference") || `${type} row ${row}`,
          kind: "OTHER",
          amount: credit - debit,
          currency,
          occurredAt,
          raw,
          notReconciled: type,
          ...(payoutOf && { payout: payoutOf }),
          ...(lineId && { lineId }),
        };

      // A refund's own pspReference is its Modification Reference; Psp Reference is the payment's.
      const named = transaction.kind === "PAYMENT" ? "Psp Reference" : "Modification Reference";
      const reference = get(named) && `${get(named)}${transaction.suffix ?? ""}`;
      if (!reference) throw new ReportError(row, named, "empty");
      bounded(row, named, reference, `the ${type} record`);
      const settled = settledSideOf(row, get);
      // Its fee is posted from the report under "<reference>:fee" (lib/recon/run.ts).
      if (settled?.fee) bounded(row, named, `${reference}:fee`, `the ${type} record's fee ("<reference>:fee")`);
      return {
        row,
        reference,
        kind: transaction.kind,
        amount: credit - debit,
        currency,
        occurredAt,
        raw,
        ...(settled?.fee && { fee: settled.fee }),
        ...(settled &&
          settled.currency !== currency && { settledGross: settled.gross, settledCurrency: settled.currency }),
        ...(payoutOf && { payout: payoutOf }),
        ...(lineId && { lineId }),
        ...(/^RefundedReversed$/i.test(type) && { notReconciled: type }),
      };
    };
  },
};
