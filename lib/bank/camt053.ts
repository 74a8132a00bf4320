// ISO 20022 camt.053 (BkToCstmrStmt), any version (camt.053.001.NN), read as a
// stream with saxes: the file goes through in chunks and only the entry being read
// is held, so a statement of 100,000 entries costs what one entry does.
//
// What is read, per <Stmt>: the account (Acct/Id/IBAN or Acct/Id/Othr/Id), the
// period (FrToDt), and per <Ntry>: Amt@Ccy (major-unit decimal → minor units by
// string, exactly), CdtDbtInd (CRDT +, DBIT −), RvslInd, Sts (001.02's
// <Sts>BOOK</Sts> and 001.08's <Sts><Cd>BOOK</Cd></Sts>), BookgDt and ValDt (Dt or
// DtTm), AcctSvcrRef else NtryRef, the remittance (every RmtInf/Ustrd and
// Strd/CdtrRefInf/Ref of every TxDtls, then AddtlNtryInf, joined) and the other
// party (the debtor of a credit, the creditor of a debit; Nm or Pty/Nm). Only
// booked entries become lines; the others are counted by status.
//
// Refused, naming the line and the element: a DOCTYPE (no DTD is read, so no
// entity can expand), XML that is not well-formed or not UTF-8, a root that is not
// a camt.053 Document, an amount that is not a plain decimal with at most its
// currency's decimals, a missing or unknown currency, a booked entry without a
// booking date, and any text node (or tag, comment, DTD) over MAX_NODE_CHARS: a
// 50 MB text node is refused after a megabyte, never held whole.
import { SaxesParser, type SaxesTagNS } from "saxes";
import { MAX_MINOR_UNITS, toMinorUnits } from "@/lib/ledger/money";
import {
  calendarDay,
  currencyCode,
  MAX_LINE_TEXT,
  StatementError,
  type StatementLine,
  type StatementMeta,
} from "@/lib/bank/statement-line";

const CAMT053 = /^urn:iso:std:iso:20022:tech:xsd:camt\.053\.001\.\d{2}$/;
const ISO20022 = /^urn:iso:std:iso:20022:tech:xsd:([a-z]{4}\.\d{3})\.\d{3}\.\d{2}$/;

/**
 * The most characters the parser may read without an element, text or comment
 * ending. No value in a camt.053 comes near it (Ustrd is at most 140, AddtlNtryInf
 * 500); a file past it is hostile or not a statement, and saxes buffers a node
 * until it ends, so this is what bounds its memory.
 */
export const MAX_NODE_CHARS = 1 << 20;
const FEED_CHARS = 64 * 1024;

type Entry = {
  ordinal: number;
  line: number;
  amount: string | null;
  currency: string | null;
  amountLine: number;
  direction: string | null;
  reversal: string | null;
  status: string | null;
  bookingDate: string | null;
  valueDate: string | null;
  acctSvcrRef: string | null;
  ntryRef: string | null;
  remittance: string[];
  additional: string[];
  debtor: string | null;
  creditor: string | null;
  textLength: number;
};

type Statement = { account: string | null; from: string | null; to: string | null };

const newEntry = (ordinal: number, line: number): Entry => ({
  ordinal,
  line,
  amount: null,
  currency: null,
  amountLine: line,
  direction: null,
  reversal: null,
  status: null,
  bookingDate: null,
  valueDate: null,
  acctSvcrRef: null,
  ntryRef: null,
  remittance: [],
  additional: [],
  debtor: null,
  creditor: null,
  textLength: 0,
});

/** "2026-12-01" or "2026-12-01T10:00:00+01:00" → the day as the bank wrote it. */
function dayOf(text: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?)?$/.exec(text);
  return m ? calendarDay(Number(m[1]), Number(m[2]), Number(m[3])) : null;
}

/** Where an element ends up relative to <Ntry>, with the path's names joined by "/". */
const under = (path: string[], from: number) => path.slice(from).join("/");

/**
 * Booked entries of a camt.053 file, in file order. `meta` is filled as the file
 * is read (accounts, period, entries skipped) and is complete once the generator ends.
 */
export async function* readCamt053(
  input: AsyncIterable<Buffer | string>,
  meta: StatementMeta,
): AsyncGenerator<StatementLine> {
  const parser = new SaxesParser({ xmlns: true, position: true });
  const decoder = new TextDecoder("utf-8", { fatal: true });
  /** Local names from the root down; elements of other namespaces are "#other", so no path matches them. */
  const path: string[] = [];
  let namespace: string | null = null;
  let text = "";
  let statement: Statement | null = null;
  let entry: Entry | null = null;
  let entryDepth = 0;
  let ordinal = 0;
  let lastEvent = 0;
  const out: StatementLine[] = [];

  const at = (element?: string) =>
    `line ${parser.line}, column ${parser.column + 1}${element ? ` (<${element}>${entry ? ` of entry ${entry.ordinal}` : ""})` : ""}`;
  const refuse = (problem: string, element?: string): never => {
    throw new StatementError(at(element), problem);
  };
  const seen = () => {
    lastEvent = parser.position;
  };

  parser.on("xmldecl", (decl) => {
    if (decl.encoding && !/^utf-?8$/i.test(decl.encoding))
      refuse(`the file declares encoding ${decl.encoding}; camt.053 statements are read as UTF-8`);
  });
  parser.on("doctype", () =>
    refuse("a DOCTYPE is not allowed in a bank statement (Tally reads no DTD, so no entity in one can expand)"),
  );
  parser.on("processinginstruction", seen);
  parser.on("comment", seen);
  // Text split by comments or CDATA sections arrives in pieces that each end a node: the element's text is capped too.
  const addText = (t: string) => {
    seen();
    text += t;
    if (text.length > MAX_NODE_CHARS)
      refuse(`more than ${MAX_NODE_CHARS} characters of text in one element: not a bank statement`, path.at(-1));
  };
  parser.on("text", addText);
  parser.on("cdata", addText);
  parser.on("opentag", (tag: SaxesTagNS) => {
    seen();
    text = "";
    if (path.length === 0) {
      if (tag.local !== "Document" || !CAMT053.test(tag.uri)) {
        const other = ISO20022.exec(tag.uri)?.[1];
        refuse(
          other
            ? `this is an ISO 20022 ${other} message (${tag.uri}), not a camt.053 bank statement`
            : `not a camt.053 bank statement: the root element is <${tag.name}>${tag.uri ? ` in namespace ${tag.uri}` : " without a namespace"}, not a Document in urn:iso:std:iso:20022:tech:xsd:camt.053.001.NN`,
          tag.name,
        );
      }
      namespace = tag.uri;
      path.push("Document");
      return;
    }
    const local = tag.uri === namespace ? tag.local : "#other";
    path.push(local);
    const depth = path.length;
    if (depth === 2 && local !== "BkToCstmrStmt")
      refuse(`not a camt.053 bank statement: <Document> holds <${tag.name}>, not <BkToCstmrStmt>`, tag.name);
    if (depth === 3 && local === "Stmt") statement = { account: null, from: null, to: null };
    if (depth === 4 && local === "Ntry" && path[2] === "Stmt") {
      ordinal++;
      entry = newEntry(ordinal, parser.line);
      entryDepth = depth;
    }
    if (entry && depth === entryDepth + 1 && local === "Amt") {
      entry.amountLine = parser.line;
      const ccy = tag.attributes.Ccy;
      entry.currency = typeof ccy === "string" ? ccy : (ccy?.value ?? null);
    }
  });
  parser.on("closetag", (tag: SaxesTagNS) => {
    seen();
    const value = text.trim();
    text = "";
    const depth = path.length;
    const local = path[depth - 1]!;
    if (entry) {
      if (depth === entryDepth) {
        const line = finishEntry(entry, statement!, meta, refuse);
        if (line) out.push(line);
        entry = null;
      } else readEntryElement(entry, under(path, entryDepth), value, refuse, tag.name);
    } else if (statement && path[2] === "Stmt") {
      const inStmt = under(path, 3);
      if (inStmt === "Acct/Id/IBAN" || inStmt === "Acct/Id/Othr/Id") statement.account ??= value;
      else if (inStmt === "FrToDt/FrDtTm" || inStmt === "FrToDt/ToDtTm") {
        const day = dayOf(value) ?? refuse(`${JSON.stringify(value)} is not a date (YYYY-MM-DD[Thh:mm:ss])`, tag.name);
        if (local === "FrDtTm") statement.from = day;
        else statement.to = day;
      } else if (depth === 3 && local === "Stmt") {
        if (statement.from && (meta.from === null || statement.from < meta.from)) meta.from = statement.from;
        if (statement.to && (meta.to === null || statement.to > meta.to)) meta.to = statement.to;
        if (statement.account && !meta.accounts.includes(statement.account)) meta.accounts.push(statement.account);
        statement = null;
      }
    }
    path.pop();
  });

  const feed = (chunk: string) => {
    try {
      parser.write(chunk);
    } catch (error) {
      if (error instanceof StatementError) throw error;
      throw new StatementError(at(), `not well-formed XML: ${xmlProblem(error)}`);
    }
    if (parser.position - lastEvent > MAX_NODE_CHARS)
      refuse(
        `more than ${MAX_NODE_CHARS} characters without an element ending${path.length ? ` (inside <${path.at(-1)}>)` : ""}: not a bank statement`,
      );
  };

  for await (const raw of input) {
    // However the input is cut, saxes gets at most FEED_CHARS at a time, so the node cap is checked that often.
    for (let at = 0; at < raw.length; at += FEED_CHARS) {
      let chunk: string;
      try {
        chunk =
          typeof raw === "string"
            ? raw.slice(at, at + FEED_CHARS)
            : decoder.decode(raw.subarray(at, at + FEED_CHARS), { stream: true });
      } catch {
        refuse("the file is not valid UTF-8");
      }
      feed(chunk!);
      yield* out.splice(0);
    }
  }
  try {
    feed(decoder.decode());
  } catch (error) {
    if (error instanceof StatementError) throw error;
    refuse("the file is not valid UTF-8");
  }
  try {
    parser.close();
  } catch (error) {
    throw new StatementError(at(), `not well-formed XML: ${xmlProblem(error)}`);
  }
  if (namespace === null) throw new StatementError("line 1", "the file is empty or holds no XML element");
  yield* out.splice(0);
}

/** saxes prefixes its messages with "file:line:column: "; the position is said by `at` already. */
const xmlProblem = (error: unknown) =>
  (error instanceof Error ? error.message : String(error)).replace(/^(?:.*?:)?\d+:\d+: /, "");

function readEntryElement(
  entry: Entry,
  rel: string,
  value: string,
  refuse: (problem: string, element?: string) => never,
  element: string,
): void {
  entry.textLength += value.length;
  if (entry.textLength > MAX_LINE_TEXT)
    refuse(`entry ${entry.ordinal} carries more than ${MAX_LINE_TEXT} characters of text: not a bank statement`);
  switch (rel) {
    case "Amt":
      entry.amount = value;
      return;
    case "CdtDbtInd":
      entry.direction = value;
      return;
    case "RvslInd":
      entry.reversal = value;
      return;
    case "Sts":
      // 001.02 writes the code as the element's text; 001.08 and later as <Cd>.
      if (value) entry.status = value;
      return;
    case "Sts/Cd":
    case "Sts/Prtry":
      entry.status = value;
      return;
    case "BookgDt/Dt":
    case "BookgDt/DtTm":
      entry.bookingDate =
        dayOf(value) ?? refuse(`${JSON.stringify(value)} is not a date (YYYY-MM-DD[Thh:mm:ss])`, element);
      return;
    case "ValDt/Dt":
    case "ValDt/DtTm":
      entry.valueDate =
        dayOf(value) ?? refuse(`${JSON.stringify(value)} is not a date (YYYY-MM-DD[Thh:mm:ss])`, element);
      return;
    case "AcctSvcrRef":
      entry.acctSvcrRef = value || null;
      return;
    case "NtryRef":
      entry.ntryRef = value || null;
      return;
    case "AddtlNtryInf":
      if (value) entry.additional.push(value);
      return;
  }
  if (!rel.startsWith("NtryDtls/TxDtls/")) return;
  const tx = rel.slice("NtryDtls/TxDtls/".length);
  if ((tx === "RmtInf/Ustrd" || tx === "RmtInf/Strd/CdtrRefInf/Ref") && value) entry.remittance.push(value);
  else if (tx === "RltdPties/Dbtr/Nm" || tx === "RltdPties/Dbtr/Pty/Nm") entry.debtor ??= value || null;
  else if (tx === "RltdPties/Cdtr/Nm" || tx === "RltdPties/Cdtr/Pty/Nm") entry.creditor ??= value || null;
}

function finishEntry(
  entry: Entry,
  statement: Statement,
  meta: StatementMeta,
  refuse: (problem: string, element?: string) => never,
): StatementLine | null {
  const where = (element: string) => `line ${entry.line} (<${element}> of entry ${entry.ordinal})`;
  const fail = (element: string, problem: string): never => {
    throw new StatementError(where(element), problem);
  };
  if (entry.status === null) fail("Ntry", "the entry has no <Sts> (BOOK, PDNG, INFO)");
  const status = entry.status!.toUpperCase();
  if (entry.amount === null) fail("Ntry", "the entry has no <Amt>");
  if (!entry.currency) fail("Amt", "the amount has no Ccy attribute: its currency is missing");
  const currency = currencyCode(entry.currency!);
  if (!currency.ok) fail("Amt", `Ccy ${currency.error}`);
  const code = (currency as { code: string }).code;
  if (!/^\d+(\.\d+)?$/.test(entry.amount!))
    fail(
      "Amt",
      `${JSON.stringify(entry.amount)} is not an amount: camt.053 writes a plain decimal like "1250.00" (never negative: CdtDbtInd gives the direction)`,
    );
  const minor = toMinorUnits(entry.amount!, code);
  if (!minor.ok) fail("Amt", minor.error);
  const value = (minor as { value: bigint }).value;
  if (value > MAX_MINOR_UNITS)
    fail(
      "Amt",
      `${entry.amount} ${code} is beyond the largest amount the ledger accepts (${MAX_MINOR_UNITS} minor units)`,
    );
  if (entry.direction !== "CRDT" && entry.direction !== "DBIT")
    fail("CdtDbtInd", `${JSON.stringify(entry.direction ?? "")} is not CRDT or DBIT`);
  if (entry.reversal !== null && !["true", "false", "1", "0"].includes(entry.reversal))
    fail("RvslInd", `${JSON.stringify(entry.reversal)} is not true or false`);
  if (status !== "BOOK") {
    meta.skipped[status] = (meta.skipped[status] ?? 0) + 1;
    return null;
  }
  if (!statement.account) refuse("the statement's <Acct><Id> (IBAN or Othr/Id) must come before its entries", "Ntry");
  if (entry.bookingDate === null) fail("Ntry", "a booked entry has no <BookgDt>");
  if (!meta.currencies.includes(code)) meta.currencies.push(code);
  // A statement without FrToDt covers the days it booked.
  if (!statement.from && (meta.from === null || entry.bookingDate! < meta.from)) meta.from = entry.bookingDate;
  if (!statement.to && (meta.to === null || entry.bookingDate! > meta.to)) meta.to = entry.bookingDate;
  const credit = entry.direction === "CRDT";
  return {
    row: entry.ordinal,
    account: statement.account!,
    entryRef: entry.acctSvcrRef ?? entry.ntryRef,
    bookingDate: entry.bookingDate!,
    valueDate: entry.valueDate,
    amount: credit ? value : -value,
    currency: code,
    remittance: [...entry.remittance, ...entry.additional].join(" "),
    counterparty: (credit ? (entry.debtor ?? entry.creditor) : (entry.creditor ?? entry.debtor)) ?? null,
    reversal: entry.reversal === "true" || entry.reversal === "1",
  };
}
