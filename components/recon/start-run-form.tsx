"use client";
// Start a reconciliation now: a provider with a settlement API and a day or a
// range of whole UTC days. The run is synchronous; its summary is shown here
// and it appears in the list below.
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { useApiMutation } from "@/components/use-api-mutation";

type Summary = {
  runId: string;
  compared: number;
  matched: number;
  theirsNotOurs: number;
  oursNotTheirs: number;
  mismatched: number;
  fetched: number;
  casesOpened: number;
  durationMs: number;
};

export function StartRunForm({
  tenant,
  providers,
  defaultDay,
}: {
  tenant: string;
  providers: string[];
  defaultDay: string;
}) {
  const [result, setResult] = useState<Summary | null>(null);
  const start = useApiMutation<{ provider: string; from: string; to?: string }, Summary>(
    (body) => ({ path: `/api/v1/tenants/${tenant}/reconciliation/runs`, body }),
    [
      ["runs", tenant],
      ["overview", tenant],
    ],
  );
  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setResult(null);
    start.mutate(
      { provider: String(f.get("provider")), from: String(f.get("from")), to: String(f.get("to") ?? "") || undefined },
      { onSuccess: setResult },
    );
  }
  if (providers.length === 0) {
    return (
      <section className="panel" aria-labelledby="start-h">
        <h2 id="start-h">Run against a provider&apos;s API</h2>
        <p className="muted">
          No provider endpoint of this tenant has a settlement API configured (an <code>apiKey</code> in its settings).
          Upload the provider&apos;s settlement report instead.
        </p>
      </section>
    );
  }
  return (
    <form onSubmit={submit} className="panel form-grid" aria-labelledby="start-h">
      <h2 id="start-h">Run against a provider&apos;s API</h2>
      <label>
        Provider
        <select name="provider" defaultValue={providers[0]}>
          {providers.map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
      </label>
      <div className="button-row">
        <label>
          From (UTC day)
          <input type="date" name="from" required defaultValue={defaultDay} />
        </label>
        <label>
          To (optional, inclusive)
          <input type="date" name="to" />
        </label>
      </div>
      <div className="button-row">
        <button type="submit" disabled={start.isPending}>
          {start.isPending ? "Reconciling…" : "Start run"}
        </button>
        {start.isPending && (
          <span role="status" className="muted">
            Fetching the settlement and comparing; large windows take a while.
          </span>
        )}
      </div>
      {start.error && (
        <p role="alert" className="error">
          {start.error.message}
        </p>
      )}
      {result && (
        <p role="status" className="notice">
          <Link href={`/t/${tenant}/reconciliation/${result.runId}`}>Run #{result.runId}</Link>: {result.compared}{" "}
          compared, {result.matched} matched, {result.theirsNotOurs} theirs-not-ours ({result.fetched} fetched),{" "}
          {result.oursNotTheirs} ours-not-theirs, {result.mismatched} mismatched; {result.casesOpened} cases opened.
        </p>
      )}
    </form>
  );
}
