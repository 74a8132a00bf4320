// Test fixtures: camt.053 statements as banks write them, built from a few
// fields, in the two shapes in use (001.02: <Sts>BOOK</Sts>, Dbtr/Nm; 001.08 and
// later: <Sts><Cd>BOOK</Cd></Sts>, Dbtr/Pty/Nm), and written as a stream for
// statements too large to build as one string. Imported by tests only.
import { toDecimalText } from "@/lib/ledger/money";

export type EntrySpec = {
  /** Minor units, positive; the direction says which way. Or the amount text exactly as the file should carry it. */
  amount: bigint | string;
  currency?: string | null;
  direction?: "CRDT" | "DBIT";
  status?: string;
  bookingDate?: string | null;
  valueDate?: string;
  acctSvcrRef?: string;
  ntryRef?: string;
  remittance?: string[];
  additional?: string;
  counterparty?: string;
  reversal?: boolean;
};

export type StatementSpec = {
  version?: "02" | "08";
  /** A namespace prefix (`c:`) instead of the default namespace. */
  prefix?: string;
  account?: { iban: string } | { other: string };
  from?: string;
  to?: string;
  entries: EntrySpec[];
};

const esc = (t: string) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function camtEntry(e: EntrySpec, version: "02" | "08" = "02", p = ""): string {
  const t = (tag: string, body: string) => `<${p}${tag}>${body}</${p}${tag}>`;
  const currency = e.currency === undefined ? "EUR" : e.currency;
  const amount = typeof e.amount === "bigint" ? toDecimalText(e.amount, currency ?? "EUR") : e.amount;
  const direction = e.direction ?? "CRDT";
  const status = e.status ?? "BOOK";
  const party = direction === "CRDT" ? "Dbtr" : "Cdtr";
  const name =
    e.counterparty === undefined
      ? ""
      : version === "02"
        ? t("Nm", esc(e.counterparty))
        : t("Pty", t("Nm", esc(e.counterparty)));
  return [
    `<${p}Ntry>`,
    e.ntryRef ? t("NtryRef", esc(e.ntryRef)) : "",
    `<${p}Amt${currency === null ? "" : ` Ccy="${currency}"`}>${amount}</${p}Amt>`,
    t("CdtDbtInd", direction),
    e.reversal === undefined ? "" : t("RvslInd", String(e.reversal)),
    version === "02" ? t("Sts", status) : t("Sts", t("Cd", status)),
    e.bookingDate === null
      ? ""
      : t(
          "BookgDt",
          version === "02"
            ? t("Dt", e.bookingDate ?? "2026-12-02")
            : t("DtTm", `${e.bookingDate ?? "2026-12-02"}T09:30:00+01:00`),
        ),
    e.valueDate ? t("ValDt", t("Dt", e.valueDate)) : "",
    e.acctSvcrRef ? t("AcctSvcrRef", esc(e.acctSvcrRef)) : "",
    t("BkTxCd", t("Domn", t("Cd", "PMNT") + t("Fmly", t("Cd", "RCDT") + t("SubFmlyCd", "ESCT")))),
    t(
      "NtryDtls",
      t(
        "TxDtls",
        // A TxDtls amount and reference: the reader must take the entry's own, not these.
        t("Refs", t("AcctSvcrRef", "TX-REF") + t("EndToEndId", "NOTPROVIDED")) +
          t("AmtDtls", t("TxAmt", `<${p}Amt Ccy="USD">999.99</${p}Amt>`)) +
          (name ? t("RltdPties", t(party, name)) : "") +
          (e.remittance?.length ? t("RmtInf", e.remittance.map((r) => t("Ustrd", esc(r))).join("")) : ""),
      ),
    ),
    e.additional ? t("AddtlNtryInf", esc(e.additional)) : "",
    `</${p}Ntry>`,
  ].join("");
}

export function camtHead(s: Omit<StatementSpec, "entries">): string {
  const version = s.version ?? "02";
  const p = s.prefix ?? "";
  const t = (tag: string, body: string) => `<${p}${tag}>${body}</${p}${tag}>`;
  const ns = `urn:iso:std:iso:20022:tech:xsd:camt.053.001.${version}`;
  const account = s.account ?? { iban: "DE89370400440532013000" };
  const id = "iban" in account ? t("IBAN", account.iban) : t("Othr", t("Id", account.other));
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<${p}Document xmlns${p ? `:${p.slice(0, -1)}` : ""}="${ns}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`,
    `<${p}BkToCstmrStmt>`,
    t("GrpHdr", t("MsgId", "MSG-1") + t("CreDtTm", "2026-12-04T06:00:00")),
    `<${p}Stmt>`,
    t("Id", "STMT-1"),
    t("CreDtTm", "2026-12-04T06:00:00"),
    s.from || s.to
      ? t("FrToDt", t("FrDtTm", `${s.from ?? s.to}T00:00:00`) + t("ToDtTm", `${s.to ?? s.from}T23:59:59`))
      : "",
    t("Acct", t("Id", id) + t("Ccy", "EUR")),
    t(
      "Bal",
      t("Tp", t("CdOrPrtry", t("Cd", "OPBD"))) +
        `<${p}Amt Ccy="EUR">100.00</${p}Amt>` +
        t("CdtDbtInd", "CRDT") +
        t("Dt", t("Dt", s.from ?? "2026-12-01")),
    ),
  ].join("\n");
}

export function camtTail(s: Pick<StatementSpec, "prefix">): string {
  const p = s.prefix ?? "";
  return `</${p}Stmt>\n</${p}BkToCstmrStmt>\n</${p}Document>\n`;
}

/** A whole camt.053 document. */
export function aCamt053(s: StatementSpec): string {
  const version = s.version ?? "02";
  return [camtHead(s), ...s.entries.map((e) => camtEntry(e, version, s.prefix ?? "")), camtTail(s)].join("\n");
}

/** A camt.053 of `count` entries, produced lazily in ~64 KiB pieces: never one string. */
export async function* camt053Stream(
  s: Omit<StatementSpec, "entries">,
  count: number,
  entry: (i: number) => EntrySpec,
): AsyncGenerator<string> {
  yield camtHead(s);
  let chunk = "";
  for (let i = 0; i < count; i++) {
    chunk += `${camtEntry(entry(i), s.version ?? "02", s.prefix ?? "")}\n`;
    if (chunk.length >= 65_536) {
      yield chunk;
      chunk = "";
    }
  }
  yield chunk + camtTail(s);
}
