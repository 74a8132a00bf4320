"use client";
// Bulk reprocessing for ops (issue #21.3), above the Events list: "Reprocess all
// matching" asks the server how many failed or ignored events the page's filter
// would send back now (the preview), then confirms that number with a reason
// (audited); the server refuses (409) if the filter matches another number by
// then. Recent jobs show their progress, read from the events themselves and
// polled every second while one runs, and a running job can be cancelled: what no
// worker has taken yet goes back to the state it was in.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "@/components/api-client";
import { plural, utc } from "@/components/format";
import { ReasonDialog } from "@/components/reason-dialog";
import { ListNotices } from "@/components/states";
import { TableScroll } from "@/components/table-scroll";
import { num, TableHead } from "@/components/table-head";
import type { BulkProgress } from "@/lib/pipeline/bulk-reprocess";

/** A job as JSON carries it: ids as strings, dates as ISO strings. */
type Job = { [K in keyof BulkProgress]: BulkProgress[K] extends bigint | Date ? string : BulkProgress[K] };
type Preview = { matching: number; max: number };
type Confirm = { kind: "start"; expected: number } | { kind: "cancel"; job: Job };

const FILTER_KEYS = ["status", "provider", "reference", "from", "to"] as const;

/** What a job asked for, in words: "failed stripe events, reference pi_…, received from … to …". */
function filterWords(filter: unknown): string {
  const f = (filter ?? {}) as Partial<Record<(typeof FILTER_KEYS)[number], string>>;
  return [
    `${(f.status ?? "").toLowerCase()} ${f.provider ?? ""} events`.replace(/\s+/g, " "),
    f.reference && `reference ${f.reference}…`,
    f.from && `from ${utc(f.from, false)}`,
    f.to && `before ${utc(f.to, false)}`,
  ]
    .filter(Boolean)
    .join(", ");
}

function JobRow({ job, onCancel }: { job: Job; onCancel: (job: Job) => void }) {
  const settled = job.finished + job.failed + job.returned;
  return (
    <tr>
      <td>
        #{job.id} <span className="small muted">{filterWords(job.filter)}</span>
      </td>
      <td>
        <progress value={settled} max={job.requested} aria-label={`Progress of bulk reprocessing #${job.id}`} />{" "}
        <span className="small">
          {job.state === "RUNNING" ? `${settled} of ${job.requested}` : job.state.toLowerCase()}
        </span>
      </td>
      <td className="num">{job.finished}</td>
      <td className="num">{job.failed}</td>
      <td className="num">{job.pending}</td>
      <td className="num">{job.returned}</td>
      <td className="small">
        {job.actorLabel}, {utc(job.createdAt)}: {job.reason}
        {job.cancelledBy && <> — cancelled by {job.cancelledBy}</>}
      </td>
      <td>
        {job.state === "RUNNING" && (
          <button type="button" className="secondary" onClick={() => onCancel(job)}>
            Cancel #{job.id}
          </button>
        )}
      </td>
    </tr>
  );
}

export function BulkReprocess({ tenant, filter }: { tenant: string; filter: Record<string, string> }) {
  const base = `/api/v1/tenants/${tenant}/events/bulk-reprocess`;
  const chosen = Object.fromEntries(FILTER_KEYS.filter((k) => filter[k]).map((k) => [k, filter[k]!]));
  const status = chosen.status === "FAILED" || chosen.status === "IGNORED" ? chosen.status.toLowerCase() : null;
  const jobs = useQuery({
    queryKey: ["bulk-reprocess", tenant],
    queryFn: () => api<{ jobs: Job[] }>(base),
    // Every second while a job runs: its progress is the point of the list.
    refetchInterval: (q) => (q.state.data?.jobs.some((j) => j.state === "RUNNING") ? 1_000 : 10_000),
  });
  const [confirm, setConfirm] = useState<Confirm | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const [previewing, setPreviewing] = useState(false);

  async function preview() {
    setDone(null);
    setPreviewError(null);
    setPreviewing(true);
    try {
      const p = await api<Preview>(`${base}/preview?${new URLSearchParams(chosen)}`);
      if (p.matching === 0)
        setPreviewError(
          "Nothing to reprocess: no event matching these filters is eligible now (an event with a claim a worker holds, a held over-refund, or finished work is never sent back).",
        );
      else if (p.matching > p.max)
        setPreviewError(
          `The filter matches ${p.matching.toLocaleString("en")} events; one request sends back at most ${p.max.toLocaleString("en")}. Narrow it by provider, dates or reference.`,
        );
      else setConfirm({ kind: "start", expected: p.matching });
    } catch (e) {
      setPreviewError((e as Error).message);
    } finally {
      setPreviewing(false);
    }
  }

  const list = jobs.data?.jobs ?? [];
  return (
    <section aria-labelledby="bulk-h">
      <h2 id="bulk-h">Bulk reprocessing</h2>
      {status ? (
        <div className="button-row">
          {chosen.reference && (
            <span className="small muted">The reference counts as a prefix here: every id starting with it.</span>
          )}
          <button type="button" onClick={preview} disabled={previewing}>
            {previewing ? "Counting…" : `Reprocess all matching ${status} events…`}
          </button>
        </div>
      ) : (
        <p className="small muted">
          Filter by status <em>failed</em> or <em>ignored</em> (and provider, reference or dates) to send every matching
          event back through the worker at once.
        </p>
      )}
      {previewError && (
        <p role="alert" className="error">
          {previewError}
        </p>
      )}
      <ListNotices done={done} error={jobs.error} />
      {list.length > 0 && (
        <TableScroll label="Bulk reprocessing jobs">
          <table className="table">
            <caption className="visually-hidden">Recent bulk reprocessing, newest first</caption>
            <TableHead
              columns={[
                "Job",
                "Progress",
                num("Finished"),
                num("Failed again"),
                num("Waiting"),
                num("Returned"),
                "Who, when, why",
                <span key="a" className="visually-hidden">
                  Actions
                </span>,
              ]}
            />
            <tbody>
              {list.map((j) => (
                <JobRow
                  key={j.id}
                  job={j}
                  onCancel={(job) => {
                    setDone(null);
                    setConfirm({ kind: "cancel", job });
                  }}
                />
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {confirm?.kind === "start" && (
        <ReasonDialog<{ jobId: string; requeued: number }>
          id="bulk-start"
          title={`Reprocess ${plural(confirm.expected, "event")}?`}
          placeholder="e.g. the currency table now has the missing currency"
          submit={`Reprocess ${plural(confirm.expected, "event")}`}
          pending="Sending back…"
          request={(reason) => ({ path: base, body: { filter: chosen, expected: confirm.expected, reason } })}
          refresh={[
            ["bulk-reprocess", tenant],
            ["events", tenant],
          ]}
          onClose={() => setConfirm(null)}
          onDone={(r) =>
            setDone(`Bulk reprocessing #${r.jobId} started: ${plural(r.requeued, "event")} sent back to the worker.`)
          }
        >
          Every {status} event matching these filters
          {chosen.reference ? ` (a reference or delivery id starting with ${chosen.reference})` : ""} goes back through
          the worker: {confirm.expected} when counted just now; if that number has changed, nothing is sent and you are
          asked to count again. The claim protocol still posts each payment once.
        </ReasonDialog>
      )}
      {confirm?.kind === "cancel" && (
        <ReasonDialog<{ returned: number }>
          id="bulk-cancel"
          title={`Cancel bulk reprocessing #${confirm.job.id}?`}
          placeholder="e.g. wrong filter: meant only yesterday's events"
          submit="Cancel the job"
          pending="Cancelling…"
          request={(reason) => ({ path: `${base}/${confirm.job.id}/cancel`, body: { reason } })}
          refresh={[["bulk-reprocess", tenant]]}
          onClose={() => setConfirm(null)}
          onDone={(r) =>
            setDone(
              `Bulk reprocessing #${confirm.job.id} cancelled: ${plural(r.returned, "event")} returned to where ${r.returned === 1 ? "it was" : "they were"}; those a worker had already taken finish normally.`,
            )
          }
        >
          Events no worker has taken yet go back to the state and error they had.
        </ReasonDialog>
      )}
    </section>
  );
}
