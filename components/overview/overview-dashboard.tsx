"use client";
// The overview, kept fresh: the server renders the first paint with the same
// data the JSON API returns, then react-query polls it every 10 seconds, so a
// new reconciliation run or a stuck claim shows up without a reload.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { api } from "@/components/api-client";
import { duration, latency, plural, utc } from "@/components/format";
import {
  causeLabel,
  type ChartDay,
  type ChartView,
  DiscrepancyChart,
  KINDS,
  kindLabel,
} from "@/components/overview/discrepancy-chart";
import { num, TableHead } from "@/components/table-head";
import { TableScroll } from "@/components/table-scroll";

type Verdict = {
  verdict: "falling" | "flat" | "rising";
  slopePerDay: number;
  meanPerDay: number;
  days: number;
  reading: string;
};
type Quantile =
  | { kind: "none" }
  | { kind: "estimate"; seconds: number; bucket: { from: number; to: number } }
  | { kind: "above"; seconds: number };
type AckWindow = { windowMs: number; from: string; p99: Quantile; deliveries: number; tone: "good" | "bad" | "none" };

export type OverviewData = {
  range: { days: 30 | 90; from: string; to: string };
  series: { days: ChartDay[]; providers: string[]; causes: string[]; total: number; reconciledDays: number };
  control: {
    breaches: { provider: string; day: string; rate: number; limit: number; text: string }[];
    judgedDays: number;
    notEnoughHistory: { provider: string; days: number }[];
    windowDays: number;
    minHistoryDays: number;
  };
  verdict: Verdict;
  verdictByProvider: Record<string, Verdict>;
  ack: { sloSeconds: number; recent: AckWindow; day: AckWindow; since: string };
  eventsToday: { total: number; webhooks: number; fetched: number; since: string };
  outbox: { pending: number; oldestSeconds: number };
  stuck: {
    stale_claim: number;
    waiting_claim: number;
    provider_wait: number;
    conflict: number;
    failed_claim: number;
    failed_event: number;
    total: number;
    staleMs: number;
  };
  cases: { OPEN: number; PROPOSED: number; WAITING: number; ESCALATED: number; total: number };
  alerts: { id: string; provider: string | null; kind: string; message: string; raisedAt: string }[];
  lastRun: {
    id: string;
    provider: string;
    status: string;
    startedAt: string;
    finishedAt: string | null;
    error: string | null;
  } | null;
  lastGapCheck: {
    provider: string;
    startedAt: string;
    finishedAt: string | null;
    found: number;
    stored: number;
    error: string | null;
  } | null;
  generatedAt: string;
};

export const POLL_MS = 10_000;

/** falling and flat-at-zero are good news; rising, and flat above zero, are defects to fix. */
function tone(v: Verdict): "good" | "bad" {
  return v.verdict === "falling" || (v.verdict === "flat" && v.meanPerDay === 0) ? "good" : "bad";
}
const ARROW = { falling: "↘", flat: "→", rising: "↗" } as const;

const VIEWS: { view: ChartView; label: string }[] = [
  { view: "provider", label: "By provider" },
  { view: "kind", label: "By kind" },
  { view: "cause", label: "By cause" },
];
const VIEW_CAPTION: Record<ChartView, string> = {
  provider:
    "One area per provider, overlaid; the line is the 7-day average of all providers. Hatched days were not reconciled for at least one provider (unknown, not zero).",
  kind: "One bar per day, stacked by kind (theirs not ours, ours not theirs, mismatch, payout or bank); the line is the 7-day average. Hatched days were not reconciled (unknown, not zero).",
  cause:
    "One bar per day, stacked by cause (why Tally did not post it, or why it differs); the line is the 7-day average. Hatched days were not reconciled (unknown, not zero).",
};

/** The table's columns for a view: their headings and each day's figure. */
function tableColumns(view: ChartView, series: OverviewData["series"]) {
  if (view === "provider")
    return series.providers.map((p) => ({ heading: p, value: (d: ChartDay) => d.byProvider[p] ?? null }));
  if (view === "kind")
    return KINDS.map((k) => ({ heading: kindLabel(k), value: (d: ChartDay) => d.byKind?.[k] ?? null }));
  return series.causes.map((c) => ({ heading: causeLabel(c), value: (d: ChartDay) => d.byCause?.[c] ?? 0 }));
}

function ControlLimit({ control }: { control: OverviewData["control"] }) {
  const rule = `A day is a breach when its rate (discrepancies / compared) is above p̄ + 3·√(p̄(1−p̄)/n): p̄ over the reconciled days of the ${control.windowDays} before it, n the day's compared count.`;
  return (
    <div className="small" data-testid="control-limit">
      {control.breaches.length > 0 ? (
        <p className="tone-bad" data-testid="control-breaches">
          <strong>Breaches:</strong> {control.breaches.map((b) => b.text).join("; ")}
        </p>
      ) : (
        <p data-testid="control-breaches">
          {control.judgedDays > 0
            ? `No day above its control limit (${plural(control.judgedDays, "day")} judged).`
            : "No day judged against a control limit yet."}
        </p>
      )}
      {control.notEnoughHistory.length > 0 && (
        <p className="muted">
          Not enough history to judge:{" "}
          {control.notEnoughHistory.map((n) => `${plural(n.days, "day")} of ${n.provider}`).join(", ")} (a day needs{" "}
          {control.minHistoryDays} reconciled days among the {control.windowDays} before it).
        </p>
      )}
      <p className="muted">{rule}</p>
    </div>
  );
}

function ackText(q: Quantile): string {
  if (q.kind === "none") return "—";
  if (q.kind === "above") return `> ${latency(q.seconds)}`;
  return `≈ ${latency(q.seconds)}`;
}

const TONE_WORD = { good: "within", bad: "over", none: "" } as const;

/** "last 15 min", "last 24 h": the nominal window; the text below says what it actually covers. */
function windowName(ms: number): string {
  return ms % 3_600_000 === 0
    ? `last ${ms / 3_600_000} h`
    : ms % 60_000 === 0
      ? `last ${ms / 60_000} min`
      : `last ${Math.round(ms / 1000)} s`;
}

function AckWindowFigure({ w, slo, big }: { w: AckWindow; slo: number; big: boolean }) {
  return (
    <span className={`ack-window ack-${w.tone}`} data-testid={big ? "ack-recent" : "ack-day"} data-tone={w.tone}>
      <span className={big ? "stat-value" : "ack-day-value"}>{ackText(w.p99)}</span>{" "}
      <span className="small">
        {windowName(w.windowMs)}
        {w.tone !== "none" && (
          <>
            ,{" "}
            <span className={`tone-${w.tone}`}>
              {TONE_WORD[w.tone]} the {latency(slo)} objective
            </span>
          </>
        )}
      </span>
    </span>
  );
}

function AckStat({ ack, now }: { ack: OverviewData["ack"]; now: string }) {
  const r = ack.recent;
  // The server's clock, not the browser's: the same text on both sides of hydration.
  const started = Date.parse(r.from) > Date.parse(now) - r.windowMs;
  return (
    <div className={`stat ${r.tone === "bad" ? "stat-bad" : ""}`} data-testid="ack-p99">
      <span className="stat-label">Acknowledgement p99</span>
      <AckWindowFigure w={r} slo={ack.sloSeconds} big />
      <AckWindowFigure w={ack.day} slo={ack.sloSeconds} big={false} />
      <span className="small muted">
        {r.deliveries === 0
          ? `No deliveries acknowledged since ${utc(r.from, false)} UTC.`
          : `${plural(r.deliveries, "delivery", "deliveries")} since ${utc(r.from, false)} UTC${started ? " (this web process started then)" : ""}; estimated from the latency histogram's buckets${r.p99.kind === "estimate" ? ` (${latency(r.p99.bucket.from)}–${latency(r.p99.bucket.to)})` : ""}, all tenants.`}
      </span>
    </div>
  );
}

export function OverviewDashboard({
  tenant,
  initial,
  links,
}: {
  tenant: string;
  initial: OverviewData;
  links: { claims: boolean; cases: boolean; reconciliation: boolean };
}) {
  const [days, setDays] = useState<30 | 90>(initial.range.days);
  const [view, setView] = useState<ChartView>("provider");
  const { data, error, isFetching } = useQuery({
    queryKey: ["overview", tenant, days],
    queryFn: () => api<OverviewData>(`/api/v1/tenants/${tenant}/overview?days=${days}`),
    initialData: days === initial.range.days ? initial : undefined,
    placeholderData: keepPreviousData,
    refetchInterval: POLL_MS,
  });
  if (!data) return <p className="muted">Loading…</p>;
  const v = data.verdict;
  const breaches = data.control.breaches.length
    ? ` Red diamonds mark ${plural(data.control.breaches.length, "day")} above the control limit: ${data.control.breaches.map((b) => b.text).join("; ")}.`
    : "";
  const caption = `Discrepancies per day, ${data.range.from} to ${data.range.to}: ${plural(data.series.total, "discrepancy", "discrepancies")} on ${plural(data.series.reconciledDays, "reconciled day")}${data.series.providers.length ? ` (${data.series.providers.join(", ")})` : ""}. ${VIEW_CAPTION[view]}${breaches}`;
  const columns = tableColumns(view, data.series);
  return (
    <div className="overview">
      {error && (
        <p role="alert" className="error">
          Could not refresh: {error.message}. The figures below may be stale; they retry every {POLL_MS / 1000} s.
        </p>
      )}

      {data.alerts.length > 0 && (
        <section className="alerts" aria-labelledby="alerts-h">
          <h2 id="alerts-h">{plural(data.alerts.length, "uncleared alert")}</h2>
          <ul>
            {data.alerts.map((a) => (
              <li key={a.id}>
                <strong>
                  {a.kind.replace(/_/g, " ")}
                  {a.provider ? ` · ${a.provider}` : ""}
                </strong>{" "}
                <span className="muted">since {utc(a.raisedAt, false)} UTC</span>
                <br />
                {a.message}
              </li>
            ))}
          </ul>
          <p className="small">
            An alert clears itself when the next reconciliation run finds deliveries flowing again.
          </p>
        </section>
      )}

      <div className="overview-grid">
        <section className="panel" aria-labelledby="trend-h">
          <div className="panel-head">
            <h2 id="trend-h">Discrepancies per day</h2>
            <div role="group" aria-label="Chart by" className="segmented">
              {VIEWS.map((v) => (
                <button key={v.view} type="button" aria-pressed={view === v.view} onClick={() => setView(v.view)}>
                  {v.label}
                </button>
              ))}
            </div>
            <div role="group" aria-label="Range" className="segmented">
              {([30, 90] as const).map((d) => (
                <button key={d} type="button" aria-pressed={days === d} onClick={() => setDays(d)}>
                  {d} days
                </button>
              ))}
            </div>
          </div>
          <div className={`verdict verdict-${tone(v)}`} data-testid="verdict">
            <span className="verdict-word">
              <span aria-hidden="true">{ARROW[v.verdict]} </span>
              {v.verdict}
            </span>
            <span className="verdict-reading">{v.reading}</span>
            <span className="muted small">
              Least-squares trend over the {plural(v.days, "reconciled day")} of the last {data.range.days} days
              {v.verdict === "flat" && v.meanPerDay > 0
                ? ": the target is a number trending to zero, not a steady one"
                : ""}
              .
            </span>
          </div>
          {Object.keys(data.verdictByProvider).length > 1 && (
            <ul className="inline-list small">
              {Object.entries(data.verdictByProvider).map(([p, pv]) => (
                <li key={p}>
                  <strong>{p}</strong>: <span className={`tone-${tone(pv)}`}>{pv.verdict}</span>, mean{" "}
                  {pv.meanPerDay.toFixed(1)}/day
                </li>
              ))}
            </ul>
          )}
          {data.series.reconciledDays === 0 ? (
            <div className="empty">
              <h3>No reconciled days in this range</h3>
              <p>
                The chart fills in as reconciliation runs compare the provider&apos;s settlement with the ledger: daily
                at the scheduled time, or{" "}
                {links.reconciliation ? (
                  <Link href={`/t/${tenant}/reconciliation`}>start one now</Link>
                ) : (
                  "when someone starts one"
                )}
                .
              </p>
            </div>
          ) : (
            <DiscrepancyChart
              days={data.series.days}
              providers={data.series.providers}
              causes={data.series.causes}
              view={view}
              caption={caption}
            />
          )}
          <ControlLimit control={data.control} />
          <p className="small" data-testid="discrepancy-total">
            <strong>{data.series.total}</strong> discrepancies in the last {data.range.days} days, on{" "}
            {plural(data.series.reconciledDays, "reconciled day")}.
          </p>
          <details>
            <summary>The daily counts as a table</summary>
            <TableScroll label="Discrepancies per day">
              <table className="table compact" data-testid="discrepancy-table">
                <caption className="visually-hidden">
                  Discrepancies per day and {view === "provider" ? "provider" : view}
                </caption>
                <TableHead
                  columns={[
                    "Day",
                    ...columns.map((c) => num(c.heading)),
                    num("Total"),
                    num("7-day average"),
                    "Above limit",
                  ]}
                />
                <tbody>
                  {data.series.days
                    .filter((d) => d.total !== null)
                    .map((d) => (
                      <tr key={d.day}>
                        <td>{d.day}</td>
                        {columns.map((c) => (
                          <td key={c.heading} className="num">
                            {c.value(d) ?? <span className="muted small">not reconciled</span>}
                          </td>
                        ))}
                        <td className="num">{d.total}</td>
                        <td className="num">{d.average7 ?? "—"}</td>
                        <td className={d.breaches.length ? "tone-bad" : undefined}>
                          {d.breaches.length ? `breach: ${d.breaches.map((b) => b.provider).join(", ")}` : ""}
                        </td>
                      </tr>
                    ))}
                </tbody>
              </table>
            </TableScroll>
          </details>
        </section>

        <aside aria-label="Operations" className="stat-column">
          <AckStat ack={data.ack} now={data.generatedAt} />
          <div className="stat">
            <span className="stat-label">Events received today</span>
            <span className="stat-value">{data.eventsToday.total}</span>
            <span className="small muted">
              {data.eventsToday.webhooks} webhooks, {data.eventsToday.fetched} fetched by reconciliation, since 00:00
              UTC
            </span>
          </div>
          <div className="stat">
            <span className="stat-label">Outbox backlog</span>
            <span className="stat-value">{data.outbox.pending}</span>
            <span className="small muted">
              {data.outbox.pending === 0
                ? "Every receipt is sent."
                : `Oldest waiting ${duration(data.outbox.oldestSeconds * 1000)}.`}
            </span>
          </div>
          <div className={`stat ${data.stuck.total ? "stat-bad" : ""}`} data-testid="stuck-count">
            <span className="stat-label">Stuck claims</span>
            <span className="stat-value">
              {links.claims ? <Link href={`/t/${tenant}/claims`}>{data.stuck.total}</Link> : data.stuck.total}
            </span>
            <span className="small muted">
              {data.stuck.stale_claim} held over {duration(data.stuck.staleMs)}, {data.stuck.waiting_claim} refunds
              waiting that long for their payment, {data.stuck.provider_wait} waiting for provider,{" "}
              <span data-testid="stuck-conflicts">{data.stuck.conflict} conflicts</span>, {data.stuck.failed_claim}{" "}
              failed claims, {data.stuck.failed_event} unparseable events
            </span>
          </div>
          <div className={`stat ${data.cases.total ? "stat-warn" : ""}`}>
            <span className="stat-label">Open cases</span>
            <span className="stat-value">
              {links.cases ? <Link href={`/t/${tenant}/cases`}>{data.cases.total}</Link> : data.cases.total}
            </span>
            <span className="small muted">
              {data.cases.OPEN} to decide, {data.cases.PROPOSED} awaiting approval, {data.cases.WAITING} waiting for the
              next run, {data.cases.ESCALATED} escalated
            </span>
          </div>
          <div className={`stat ${data.alerts.length ? "stat-bad" : ""}`}>
            <span className="stat-label">Uncleared alerts</span>
            <span className="stat-value">{data.alerts.length}</span>
            <span className="small muted">
              {data.alerts.length
                ? "Listed at the top of this page."
                : "Webhooks are arriving for what providers settle."}
            </span>
          </div>
          <div className="stat">
            <span className="stat-label">Last reconciliation</span>
            {data.lastRun ? (
              <span>
                {links.reconciliation ? (
                  <Link href={`/t/${tenant}/reconciliation/${data.lastRun.id}`}>Run #{data.lastRun.id}</Link>
                ) : (
                  `Run #${data.lastRun.id}`
                )}{" "}
                · {data.lastRun.provider} ·{" "}
                <span className={data.lastRun.status === "FAILED" ? "tone-bad" : ""}>
                  {data.lastRun.status.toLowerCase()}
                </span>
                <br />
                <span className="small muted">started {utc(data.lastRun.startedAt, false)} UTC</span>
              </span>
            ) : (
              <span className="small muted">None yet.</span>
            )}
          </div>
          <div className="stat" data-testid="last-gap-check">
            <span className="stat-label">Last gap check</span>
            {data.lastGapCheck ? (
              <span>
                {data.lastGapCheck.provider} ·{" "}
                {data.lastGapCheck.error ? (
                  <span className="tone-bad" title={data.lastGapCheck.error}>
                    failed
                  </span>
                ) : data.lastGapCheck.finishedAt ? (
                  `${data.lastGapCheck.found} undelivered found, ${data.lastGapCheck.stored} taken in`
                ) : (
                  "running"
                )}
                <br />
                <span className="small muted">started {utc(data.lastGapCheck.startedAt, false)} UTC</span>
              </span>
            ) : (
              <span className="small muted">None yet (hourly, for providers that list undelivered events).</span>
            )}
          </div>
          <p className="small muted" aria-busy={isFetching}>
            Updated {utc(data.generatedAt)} UTC; refreshes every {POLL_MS / 1000} s.
          </p>
        </aside>
      </div>
    </div>
  );
}
