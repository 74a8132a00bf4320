"use client";
// Import a bank statement: camt.053 as the bank sends it, or a CSV export with
// its layout (JSON: which column is what, the date format, the decimal mark). The
// upload itself is components/upload/file-upload-form.tsx; the server imports the
// file and matches it to the payouts. A file that cannot be read exactly comes back
// with the line or row at fault and nothing imported.
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { plural } from "@/components/format";
import { FileField, FileUploadForm, mib } from "@/components/upload/file-upload-form";

type Summary = {
  statementId: string;
  lines: number;
  credits: number;
  debits: number;
  skippedPending: number;
  matchedPayouts: number;
  withinTolerance: number;
  ambiguous: number;
  unmatchedPayouts: number;
  unmatchedCredits: number;
  casesOpened: number;
  casesClosed: number;
};

export const LAYOUT_EXAMPLE = JSON.stringify(
  {
    account: "Hausbank Giro",
    delimiter: ";",
    dateColumn: "Buchungstag",
    dateFormat: "DD.MM.YYYY",
    amountColumn: "Betrag",
    decimalSeparator: ",",
    thousandsSeparator: ".",
    currency: "EUR",
    remittanceColumns: ["Verwendungszweck"],
    counterpartyColumn: "Auftraggeber/Empfänger",
  },
  null,
  2,
);

export function StatementUploadForm({ tenant, maxBytes }: { tenant: string; maxBytes: number }) {
  const router = useRouter();
  const [format, setFormat] = useState<"camt053" | "csv">("camt053");
  return (
    <FileUploadForm<Summary>
      headingId="bank-upload-h"
      heading="Import a bank statement"
      intro={
        <>
          ISO 20022 camt.053 (any version), or the bank&apos;s CSV export with its layout. Booked entries are imported;
          pending ones are counted. The same file twice is refused. Up to {mib(maxBytes)}.
        </>
      }
      maxBytes={maxBytes}
      noFile="Choose a bank statement file first."
      url={(f, file) => {
        const layout = String(f.get("layout") ?? "").trim();
        const query = new URLSearchParams({
          format,
          name: file.name,
          ...(format === "csv" && layout ? { layout } : {}),
        });
        return `/api/v1/tenants/${tenant}/bank/statements?${query}`;
      }}
      contentType="application/octet-stream"
      submitLabel="Import and match"
      processing="Uploaded; importing the statement and matching the payouts…"
      errorTestId="bank-upload-error"
      doneTestId="bank-upload-done"
      onDone={() => {
        setFormat("camt053");
        router.refresh();
      }}
      done={(s) => (
        <>
          <Link href={`/t/${tenant}/bank/${s.statementId}`}>Statement #{s.statementId}</Link>: {plural(s.lines, "line")}{" "}
          ({plural(s.credits, "credit")}, {plural(s.debits, "debit")}
          {s.skippedPending ? `, ${s.skippedPending} not booked` : ""}); {plural(s.matchedPayouts, "payout")} matched
          {s.withinTolerance ? ` (${s.withinTolerance} within tolerance)` : ""}, {s.ambiguous} ambiguous,{" "}
          {s.unmatchedPayouts} payouts and {s.unmatchedCredits} provider credits unmatched after their window;{" "}
          {plural(s.casesOpened, "case")} opened, {s.casesClosed} closed.
        </>
      )}
    >
      <label>
        Format
        <select name="format" value={format} onChange={(e) => setFormat(e.target.value as "camt053" | "csv")}>
          <option value="camt053">camt.053 (XML)</option>
          <option value="csv">CSV, in a layout</option>
        </select>
      </label>
      <FileField label="Statement file" accept=".xml,.053,.csv,.txt,text/xml,application/xml,text/csv" />
      {format === "csv" && (
        <label>
          CSV layout (JSON)
          <textarea name="layout" rows={12} className="mono" defaultValue={LAYOUT_EXAMPLE} spellCheck={false} />
          <span className="small muted">
            Columns by header name or number (1 = the first); dateFormat YYYY-MM-DD, DD.MM.YYYY, DD/MM/YYYY or
            MM/DD/YYYY; amountColumn, or creditColumn and debitColumn; currency, or currencyColumn.
          </span>
        </label>
      )}
    </FileUploadForm>
  );
}
