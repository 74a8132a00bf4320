"use client";
// Upload a settlement report (Stripe itemized balance report, Adyen Settlement
// Details, or Tally's format). XMLHttpRequest rather than fetch because only it
// reports upload progress; the file goes as the raw body, streamed by the server
// to disk under a size cap, then reconciled. A malformed file comes back with
// the row and column at fault and nothing imported.
import { useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRef, useState, type FormEvent } from "react";
import { useCsrfToken } from "@/components/providers";

type Summary = {
  runId: string;
  compared: number;
  matched: number;
  theirsNotOurs: number;
  oursNotTheirs: number;
  mismatched: number;
  casesOpened: number;
  linesOutsideWindow: number;
  bytes: number;
};
type State =
  | { phase: "idle" }
  | { phase: "uploading"; sent: number; total: number }
  | { phase: "reconciling" }
  | { phase: "done"; summary: Summary }
  | { phase: "failed"; message: string };

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MiB`;

function upload(
  url: string,
  file: File,
  csrfToken: string,
  onProgress: (sent: number, total: number) => void,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.setRequestHeader("x-csrf-token", csrfToken);
    xhr.setRequestHeader("content-type", "text/csv");
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

export function UploadForm({ tenant, providers, maxBytes }: { tenant: string; providers: string[]; maxBytes: number }) {
  const csrfToken = useCsrfToken();
  const client = useQueryClient();
  const [state, setState] = useState<State>({ phase: "idle" });
  const form = useRef<HTMLFormElement>(null);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const file = f.get("file");
    if (!(file instanceof File) || file.size === 0)
      return setState({ phase: "failed", message: "Choose a settlement report file (CSV) first." });
    if (file.size > maxBytes)
      return setState({
        phase: "failed",
        message: `${file.name} is ${mib(file.size)}; the limit is ${mib(maxBytes)}. Split it by date and upload the parts.`,
      });
    const query = new URLSearchParams({
      provider: String(f.get("provider")),
      name: file.name,
      ...(f.get("format") ? { format: String(f.get("format")) } : {}),
    });
    setState({ phase: "uploading", sent: 0, total: file.size });
    try {
      const r = await upload(
        `/api/v1/tenants/${tenant}/reconciliation/uploads?${query}`,
        file,
        csrfToken,
        (sent, total) => setState(sent >= total ? { phase: "reconciling" } : { phase: "uploading", sent, total }),
      );
      if (r.status === 201) {
        setState({ phase: "done", summary: r.body as Summary });
        form.current?.reset();
      } else {
        const error =
          (r.body as { error?: { message?: string } } | null)?.error?.message ?? `The server answered ${r.status}`;
        setState({ phase: "failed", message: error });
      }
    } catch (error) {
      setState({ phase: "failed", message: error instanceof Error ? error.message : String(error) });
    } finally {
      await Promise.all([
        client.invalidateQueries({ queryKey: ["runs", tenant] }),
        client.invalidateQueries({ queryKey: ["overview", tenant] }),
      ]);
    }
  }

  const busy = state.phase === "uploading" || state.phase === "reconciling";
  return (
    <form ref={form} onSubmit={submit} className="panel form-grid" aria-labelledby="upload-h">
      <h2 id="upload-h">Upload a settlement report</h2>
      <p className="small muted">
        Stripe&apos;s itemized balance report, Adyen&apos;s Settlement Details Report, or Tally&apos;s{" "}
        <code>reference,kind,amount,currency,occurred_at</code>. The run covers the span of the file&apos;s lines. Up to{" "}
        {mib(maxBytes)}.
      </p>
      <label>
        Provider
        <select name="provider" defaultValue={providers[0]}>
          {providers.map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
      </label>
      <label>
        Format
        <select name="format" defaultValue="">
          <option value="">Detect from the header</option>
          <option value="stripe">Stripe itemized balance report</option>
          <option value="adyen">Adyen Settlement Details</option>
          <option value="tally">Tally (reference,kind,amount,currency,occurred_at)</option>
        </select>
      </label>
      <label>
        Report file
        <input type="file" name="file" accept=".csv,text/csv,text/plain" required />
      </label>
      <div className="button-row">
        <button type="submit" disabled={busy}>
          {busy ? "Working…" : "Upload and reconcile"}
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
      {state.phase === "reconciling" && (
        <p role="status" className="muted">
          Uploaded; reconciling the report against the ledger…
        </p>
      )}
      {state.phase === "failed" && (
        <p role="alert" className="error" data-testid="upload-error">
          {state.message}
        </p>
      )}
      {state.phase === "done" && (
        <p role="status" className="notice">
          <Link href={`/t/${tenant}/reconciliation/${state.summary.runId}`}>Run #{state.summary.runId}</Link>:{" "}
          {state.summary.compared} compared, {state.summary.matched} matched, {state.summary.theirsNotOurs}{" "}
          theirs-not-ours, {state.summary.oursNotTheirs} ours-not-theirs, {state.summary.mismatched} mismatched;{" "}
          {state.summary.casesOpened} cases opened.
        </p>
      )}
    </form>
  );
}
