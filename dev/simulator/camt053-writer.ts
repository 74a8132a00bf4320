// A bank statement as ISO 20022 camt.053.001.02 (BkToCstmrStmt) writes it: one
// statement of one account, opening and closing booked balances (OPBD, CLBD), a
// transaction summary, and one booked entry per movement. Elements are written in
// the schema's sequence order (camt.053.001.02.xsd), because a strict reader
// validates against it; BkTxCd is there because 001.02 makes it mandatory.
// The closing balance is computed, never given, so a statement cannot disagree
// with its own entries.
import { toDecimalText } from "@/lib/ledger/money";

export const CAMT053_NAMESPACE = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.02";

/** ISO 20022 bank transaction code: domain, family, sub-family (e.g. PMNT / RCDT / ESCT). */
export type BankTransactionCode = readonly [domain: string, family: string, subFamily: string];

export type CamtEntry = {
  /** Positive minor units; the direction says which way. */
  amount: bigint;
  direction: "CRDT" | "DBIT";
  /** YYYY-MM-DD */
  bookingDate: string;
  /** YYYY-MM-DD */
  valueDate: string;
  /** The bank's own reference of the entry, unique in the statement. */
  accountServicerRef: string;
  /** RmtInf/Ustrd lines, in order (each at most 140 characters in the schema). */
  remittance: string[];
  /** The other party's name: the debtor of a credit, the creditor of a debit. */
  counterparty: string;
  code: BankTransactionCode;
};

export type CamtStatement = {
  messageId: string;
  statementId: string;
  /** When the bank produced the file (ISO date and time, UTC). */
  createdAt: string;
  /** YYYY-MM-DD, both inclusive. */
  from: string;
  to: string;
  iban: string;
  bic: string;
  owner: string;
  currency: string;
  /** Signed minor units: positive is a credit balance. */
  opening: bigint;
  entries: CamtEntry[];
};

/** Opening plus credits minus debits: what CLBD says. */
export function closingBalance(s: Pick<CamtStatement, "opening" | "entries">): bigint {
  return s.entries.reduce((sum, e) => (e.direction === "CRDT" ? sum + e.amount : sum - e.amount), s.opening);
}

const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export function writeCamt053(s: CamtStatement): string {
  for (const e of s.entries) {
    if (e.amount <= 0n) throw new Error(`entry ${e.accountServicerRef}: amount must be positive, got ${e.amount}`);
    for (const line of e.remittance)
      if (line.length > 140) throw new Error(`entry ${e.accountServicerRef}: Ustrd longer than 140 characters`);
  }
  const amount = (minor: bigint) =>
    `<Amt Ccy="${escapeXml(s.currency)}">${toDecimalText(minor < 0n ? -minor : minor, s.currency)}</Amt>`;
  const text = (tag: string, value: string) => `<${tag}>${escapeXml(value)}</${tag}>`;
  const balance = (code: "OPBD" | "CLBD", value: bigint, date: string) =>
    `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp>${amount(value)}` +
    `<CdtDbtInd>${value < 0n ? "DBIT" : "CRDT"}</CdtDbtInd><Dt><Dt>${date}</Dt></Dt></Bal>`;
  const credits = s.entries.filter((e) => e.direction === "CRDT");
  const debits = s.entries.filter((e) => e.direction === "DBIT");
  const sum = (es: CamtEntry[]) => es.reduce((t, e) => t + e.amount, 0n);
  const net = sum(credits) - sum(debits);
  const decimal = (minor: bigint) => toDecimalText(minor, s.currency);
  const entry = (e: CamtEntry) => {
    const [domain, family, subFamily] = e.code;
    const party = e.direction === "CRDT" ? "Dbtr" : "Cdtr";
    return [
      "<Ntry>",
      `  ${amount(e.amount)}`,
      `  ${text("CdtDbtInd", e.direction)}`,
      "  <Sts>BOOK</Sts>",
      `  <BookgDt><Dt>${e.bookingDate}</Dt></BookgDt>`,
      `  <ValDt><Dt>${e.valueDate}</Dt></ValDt>`,
      `  ${text("AcctSvcrRef", e.accountServicerRef)}`,
      `  <BkTxCd><Domn><Cd>${domain}</Cd><Fmly><Cd>${family}</Cd><SubFmlyCd>${subFamily}</SubFmlyCd></Fmly></Domn></BkTxCd>`,
      "  <NtryDtls><TxDtls>",
      `    <Refs>${text("AcctSvcrRef", e.accountServicerRef)}<EndToEndId>NOTPROVIDED</EndToEndId></Refs>`,
      `    <RltdPties><${party}>${text("Nm", e.counterparty)}</${party}></RltdPties>`,
      `    <RmtInf>${e.remittance.map((line) => text("Ustrd", line)).join("")}</RmtInf>`,
      "  </TxDtls></NtryDtls>",
      "</Ntry>",
    ].join("\n      ");
  };
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<Document xmlns="${CAMT053_NAMESPACE}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`,
    "  <BkToCstmrStmt>",
    `    <GrpHdr>${text("MsgId", s.messageId)}${text("CreDtTm", s.createdAt)}</GrpHdr>`,
    "    <Stmt>",
    `      ${text("Id", s.statementId)}`,
    "      <ElctrncSeqNb>1</ElctrncSeqNb>",
    `      ${text("CreDtTm", s.createdAt)}`,
    `      <FrToDt><FrDtTm>${s.from}T00:00:00</FrDtTm><ToDtTm>${s.to}T23:59:59</ToDtTm></FrToDt>`,
    `      <Acct><Id>${text("IBAN", s.iban)}</Id>${text("Ccy", s.currency)}<Ownr>${text("Nm", s.owner)}</Ownr>` +
      `<Svcr><FinInstnId>${text("BIC", s.bic)}</FinInstnId></Svcr></Acct>`,
    `      ${balance("OPBD", s.opening, s.from)}`,
    `      ${balance("CLBD", closingBalance(s), s.to)}`,
    "      <TxsSummry>" +
      `<TtlNtries><NbOfNtries>${s.entries.length}</NbOfNtries><Sum>${decimal(sum(s.entries))}</Sum>` +
      `<TtlNetNtryAmt>${decimal(net < 0n ? -net : net)}</TtlNetNtryAmt><CdtDbtInd>${net < 0n ? "DBIT" : "CRDT"}</CdtDbtInd></TtlNtries>` +
      `<TtlCdtNtries><NbOfNtries>${credits.length}</NbOfNtries><Sum>${decimal(sum(credits))}</Sum></TtlCdtNtries>` +
      `<TtlDbtNtries><NbOfNtries>${debits.length}</NbOfNtries><Sum>${decimal(sum(debits))}</Sum></TtlDbtNtries>` +
      "</TxsSummry>",
    ...s.entries.map((e) => `      ${entry(e)}`),
    "    </Stmt>",
    "  </BkToCstmrStmt>",
    "</Document>",
    "",
  ].join("\n");
}
