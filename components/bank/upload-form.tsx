"use client";
// Import a bank statement: camt.053 as the bank sends it, or a CSV export with
// its layout (JSON: which column is what, the date format, the decimal mark).
// XMLHttpRequest rather than fetch because only it reports upload progress; the
// file goes as the raw body, to disk on the server under a size cap, then it is
// imported and matched to the payouts. A file that cannot be read exactly comes
// back with the line or row at fault and nothing imported.
import Link from "next/link";
import { useRouter } from "next/navigation";
import { type FormEvent, useRef, useState } from "react";
import { plural } from "@/components/format";
import { useCsrfToken } from "@/components/providers";

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
type State =
  | { phase: "idle" }
  | { phase: "uploading"; sent: number; total: number }
  | { phase: "importing" }
  | { phase: "done"; summary: Summary }
  | { phase: "failed"; message: string };

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MiB`;

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

function send(url: string, file: File, csrfToken: string, onProgress: (sent: number, total: number) => void) {
  return new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.setRequestHeader("x-csrf-token", csrfToken);
    xhr.setRequestHeader("content-type", "application/octet-stream");
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON: reported by status below
      }
      resolve({ status: xhr.status, body });
    };
    xhr.onerror = () => reject(new Error("The upload failed: the connection was lost. Try again."));
    xhr.send(file);
  });
}

export function StatementUploadForm({ tenant, maxBytes }: { tenant: string; maxBytes: number }) {
  const csrfToken = useCsrfToken();
  const router = useRouter();
  const [state, setState] = useState<State>({ phase: "idle" });
  const [format, setFormat] = useState<"camt053" | "csv">("camt053");
  const form = useRef<HTMLFormElement>(null);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const file = f.get("file");
    if (!(file instanceof File) || file.size === 0)
      return setState({ phase: "failed", message: "Choose a bank statement file first." });
    if (file.size > maxBytes)
      return setState({
        phase: "failed",
        message: `${file.name} is ${mib(file.size)}; the limit is ${mib(maxBytes)}.`,
      });
    const layout = String(f.get("layout") ?? "").trim();
    const query = new URLSearchParams({ format, name: file.name, ...(format === "csv" && layout ? { layout } : {}) });
    setState({ phase: "uploading", sent: 0, total: file.size });
    try {
      const r = await send(`/api/v1/tenants/${tenant}/bank/statements?${query}`, file, csrfToken, (sent, total) =>
        setState(sent >= total ? { phase: "importing" } : { phase: "uploading", sent, total }),
      );
      if (r.status === 201) {
        setState({ phase: "done", summary: r.body as Summary });
        form.current?.reset();
        setFormat("camt053");
        router.refresh();
      } else
        setState({
          phase: "failed",
          message:
            (r.body as { error?: { message?: string } } | null)?.error?.message ?? `The server answered ${r.status}`,
        });
    } catch (error) {
      setState({ phase: "failed", message: error instanceof Error ? error.message : String(error) });
    }
  }

  const busy = state.phase === "uploading" || state.phase === "importing";
  return (
    <form ref={form} onSubmit={submit} className="panel form-grid" aria-labelledby="bank-upload-h">
      <h2 id="bank-upload-h">Import a bank statement</h2>
      <p className="small muted">
        ISO 20022 camt.053 (any version), or the bank&apos;s CSV export with its layout. Booked entries are imported;
        pending ones are counted. The same file twice is refused. Up to {mib(maxBytes)}.
      </p>
      <label>
        Format
        <select name="format" value={format} onChange={(e) => setFormat(e.target.value as "camt053" | "csv")}>
          <option value="camt053">camt.053 (XML)</option>
          <option value="csv">CSV, in a layout</option>
        </select>
      </label>
      <label>
        Statement file
        <input type="file" name="file" accept=".xml,.053,.csv,.txt,text/xml,application/xml,text/csv" required />
      </label>
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
      <div className="button-row">
        <button type="submit" disabled={busy}>
          {busy ? "Working…" : "Import and match"}
        </button>
      </div>
      {state.phase === "uploading" && (
        <div role="status">
          <label>
            Uploading: {mib(state.sent)} of {mib(state.total)}
            <progress value={state.sent} max={state.total} aria-label="Upload progress" />
          </label>
        </div>
      )}
      {state.phase === "importing" && (
        <p role="status" className="muted">
          Uploaded; importing the statement and matching the payouts…
        </p>
      )}
      {state.phase === "failed" && (
        <p role="alert" className="error" data-testid="bank-upload-error">
          {state.message}
        </p>
      )}
      {state.phase === "done" && (
        <p role="status" className="notice" data-testid="bank-upload-done">
          <Link href={`/t/${tenant}/bank/${state.summary.statementId}`}>Statement #{state.summary.statementId}</Link>:{" "}
          {plural(state.summary.lines, "line")} ({plural(state.summary.credits, "credit")},{" "}
          {plural(state.summary.debits, "debit")}
          {state.summary.skippedPending ? `, ${state.summary.skippedPending} not booked` : ""});{" "}
          {plural(state.summary.matchedPayouts, "payout")} matched
          {state.summary.withinTolerance ? ` (${state.summary.withinTolerance} within tolerance)` : ""},{" "}
          {state.summary.ambiguous} ambiguous, {state.summary.unmatchedPayouts} payouts and{" "}
          {state.summary.unmatchedCredits} provider credits unmatched after their window;{" "}
          {plural(state.summary.casesOpened, "case")} opened, {state.summary.casesClosed} closed.
        </p>
      )}
    </form>
  );
}
