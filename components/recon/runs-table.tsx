"use client";
// Reconciliation runs, newest first, refreshed every 10 s: window, source, who
// or what started it, the bucket counts, how long it took, and how it ended.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { api } from "@/components/api-client";
import { duration, utc } from "@/components/format";
import { TableScroll } from "@/components/table-scroll";
import { num, TableHead } from "@/components/table-head";
import { NextPage } from "@/components/pager";

export type RunRow = {
  id: string;
  provider: string;
  windowFrom: string;
  windowTo: string;
  source: "API" | "CSV" | "BANK";
  sourceName: string | null;
  actorType: string;
  actorLabel: string;
  scheduledFor: string | null;
  /** What started it, in words (lib/recon/runs.ts runStarter). */
  startedBy: { kind: string; label: string };
  status: "RUNNING" | "DONE" | "FAILED";
  error: string | null;
  startedAt: string;
  durationMs: number | null;
  compared: number;
  matched: number;
  theirsNotOurs: number;
  oursNotTheirs: number;
  mismatched: number;
  silenceAlert: boolean;
};
export type RunPage = { runs: RunRow[]; nextBefore: string | null };

export const RUNS_KEY = (tenant: string, before: string) => ["runs", tenant, before];

function windowText(r: RunRow): string {
  // A report refused before its lines were read never learnt its window.
  if (r.status === "FAILED" && Date.parse(r.windowFrom) === 0) return "—";
  const from = utc(r.windowFrom, false);
  const to = utc(r.windowTo, false);
  // Whole UTC days read as days.
  if (from.endsWith("00:00") && to.endsWith("00:00")) {
    const last = new Date(Date.parse(r.windowTo) - 86_400_000).toISOString().slice(0, 10);
    return last === from.slice(0, 10) ? from.slice(0, 10) : `${from.slice(0, 10)} → ${last}`;
  }
  return `${from} → ${to}`;
}

export function RunsTable({ tenant, before, initial }: { tenant: string; before: string; initial: RunPage }) {
  const { data, error } = useQuery({
    queryKey: RUNS_KEY(tenant, before),
    queryFn: () => api<RunPage>(`/api/v1/tenants/${tenant}/reconciliation/runs${before ? `?before=${before}` : ""}`),
    initialData: initial,
    refetchInterval: 10_000,
  });
  return (
    <>
      {error && (
        <p role="alert" className="error">
          Could not refresh: {error.message}. The list may be stale; it retries every 10 s.
        </p>
      )}
      {data.runs.length === 0 ? (
        <div className="empty">
          <h3>No reconciliation runs yet</h3>
          <p>
            Start one above against the provider&apos;s settlement API, or upload a settlement report. The worker also
            runs one every day at the scheduled time for each provider with an API key.
          </p>
        </div>
      ) : (
        <TableScroll label="Reconciliation runs">
          <table className="table" data-testid="runs-table">
            <caption className="visually-hidden">Reconciliation runs, newest first</caption>
            <TableHead
              columns={[
                "Run",
                "Window (UTC)",
                "Source",
                "Started by",
                num("Matched"),
                num(<abbr title="theirs, not ours: settled by the provider, never received">Theirs only</abbr>),
                num(<abbr title="ours, not theirs: posted by us, unknown to the provider">Ours only</abbr>),
                num("Mismatch"),
                num("Took"),
                "Outcome",
              ]}
            />
            <tbody>
              {data.runs.map((r) => (
                <tr key={r.id}>
                  <td>
                    <Link href={`/t/${tenant}/reconciliation/${r.id}`}>#{r.id}</Link>{" "}
                    <span className="muted">{r.provider}</span>
                  </td>
                  <td>{windowText(r)}</td>
                  <td>
                    {r.source === "CSV" ? "report" : r.source === "BANK" ? "bank statement" : "API"}
                    <div className="small muted">{r.sourceName ?? ""}</div>
                  </td>
                  <td data-testid="run-started-by">
                    {r.startedBy.label}
                    <div className="small muted">{utc(r.startedAt, false)}</div>
                  </td>
                  <td className="num">{r.status === "FAILED" ? "—" : r.matched}</td>
                  <td className="num">{r.status === "FAILED" ? "—" : r.theirsNotOurs}</td>
                  <td className="num">{r.status === "FAILED" ? "—" : r.oursNotTheirs}</td>
                  <td className="num">{r.status === "FAILED" ? "—" : r.mismatched}</td>
                  <td className="num">
                    {r.durationMs === null ? "—" : r.durationMs < 1000 ? `${r.durationMs} ms` : duration(r.durationMs)}
                  </td>
                  <td className="outcome">
                    <span
                      className={
                        r.status === "FAILED" ? "tone-bad" : r.status === "RUNNING" ? "tone-warn" : "tone-good"
                      }
                    >
                      {r.status.toLowerCase()}
                    </span>
                    {r.silenceAlert && <div className="small tone-bad">webhook silence</div>}
                    {r.error && <div className="small error">{r.error}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {data.nextBefore && (
        <NextPage href={`/t/${tenant}/reconciliation?before=${data.nextBefore}`}>Older runs →</NextPage>
      )}
    </>
  );
}
