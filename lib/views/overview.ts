// The overview: step 7's rate made visible (the daily discrepancy count per
// provider and by cause, a 7-day moving average, the verdict on its direction and
// the days above their control limit) beside the figures ops watch: acknowledgement
// latency, what arrived today, the outbox, what is stuck, open cases and uncleared
// alerts. One read per refresh.
import { ackLatencyP99, type AckLatency } from "@/lib/views/ack-latency";
import { OPEN_STATUSES } from "@/lib/cases/cases";
import { Prisma, prisma } from "@/lib/platform/db";
import type { CaseStatus, DiscrepancyCause } from "@/lib/generated/prisma/enums";
import {
  CAUSES,
  CONTROL_MIN_HISTORY_DAYS,
  CONTROL_WINDOW_DAYS,
  controlByProvider,
  describeBreach,
  discrepancyHistory,
  trendVerdict,
  type DayPoint,
  type ProviderJudgement,
  type Verdict,
} from "@/lib/recon/trend";
import { countStuck, type StuckCounts } from "@/lib/views/stuck-claims";
import { latestReconRun } from "@/lib/recon/runs";

const DAY = 86_400_000;
export const OVERVIEW_RANGES = [30, 90] as const;
export type OverviewRange = (typeof OVERVIEW_RANGES)[number];

/** The kinds of discrepancy the comparison finds; `other` is what later steps find (payout residuals, bank lines). */
export const KINDS = ["theirsNotOurs", "oursNotTheirs", "mismatched", "other"] as const;
export type Kind = (typeof KINDS)[number];

/** A day above its control limit, with the sentence that says so. */
export type Breach = ProviderJudgement & { text: string };

/** One day of the chart. Days never reconciled are unknown (null), not zero. */
export type ChartDay = {
  day: string;
  total: number | null;
  byProvider: Record<string, number | null>;
  /** The reconciled providers' discrepancies by kind and by cause; null when no provider was reconciled. */
  byKind: Record<Kind, number> | null;
  byCause: Partial<Record<DiscrepancyCause, number>> | null;
  average7: number | null;
  /** Providers whose rate this day was above its control limit. */
  breaches: { provider: string; text: string }[];
};

export type Series = {
  days: ChartDay[];
  providers: string[];
  /** The causes seen in the range, in the schema's order: one stacked series each. */
  causes: DiscrepancyCause[];
  total: number;
  reconciledDays: number;
};

export type Control = {
  breaches: Breach[];
  /** Days judged (enough history, something compared) in the range, over all providers. */
  judgedDays: number;
  /** Per provider, the reconciled days of the range not judged for want of history. */
  notEnoughHistory: { provider: string; days: number }[];
  windowDays: number;
  minHistoryDays: number;
};

const dayKey = (d: Date) => d.toISOString().slice(0, 10);

/**
 * Every day of the range with each provider's count and the counts by cause, the
 * trailing 7-day mean of the daily total over the days that were reconciled (it
 * needs the six days before the range, so `points` should start there), and the
 * breaches of each day.
 */
export function chartSeries(points: DayPoint[], from: Date, to: Date, breaches: Breach[] = []): Series {
  const providers = [...new Set(points.map((p) => p.provider))].sort();
  const byDay = new Map<string, Map<string, number>>();
  const causesOn = new Map<string, Partial<Record<DiscrepancyCause, number>>>();
  const kindsOn = new Map<string, Record<Kind, number>>();
  const seen = new Set<DiscrepancyCause>();
  for (const p of points) {
    if (!byDay.has(p.day)) byDay.set(p.day, new Map());
    byDay.get(p.day)!.set(p.provider, p.discrepancies);
    const causes = causesOn.get(p.day) ?? {};
    for (const [cause, n] of Object.entries(p.byCause) as [DiscrepancyCause, number][]) {
      causes[cause] = (causes[cause] ?? 0) + n;
      if (p.day >= dayKey(from) && p.day < dayKey(to)) seen.add(cause);
    }
    causesOn.set(p.day, causes);
    const kinds = kindsOn.get(p.day) ?? { theirsNotOurs: 0, oursNotTheirs: 0, mismatched: 0, other: 0 };
    kinds.theirsNotOurs += p.theirsNotOurs;
    kinds.oursNotTheirs += p.oursNotTheirs;
    kinds.mismatched += p.mismatched;
    kinds.other += p.discrepancies - p.theirsNotOurs - p.oursNotTheirs - p.mismatched;
    kindsOn.set(p.day, kinds);
  }
  const totalOn = (day: string): number | null => {
    const m = byDay.get(day);
    return m ? [...m.values()].reduce((a, b) => a + b, 0) : null;
  };
  const days: ChartDay[] = [];
  let total = 0;
  let reconciledDays = 0;
  for (let t = from.getTime(); t < to.getTime(); t += DAY) {
    const day = dayKey(new Date(t));
    const m = byDay.get(day);
    const window = Array.from({ length: 7 }, (_, i) => totalOn(dayKey(new Date(t - i * DAY)))).filter(
      (v): v is number => v !== null,
    );
    const dayTotal = totalOn(day);
    if (dayTotal !== null) {
      total += dayTotal;
      reconciledDays++;
    }
    days.push({
      day,
      total: dayTotal,
      byProvider: Object.fromEntries(providers.map((p) => [p, m ? (m.get(p) ?? null) : null])),
      byKind: m ? kindsOn.get(day)! : null,
      byCause: m ? (causesOn.get(day) ?? {}) : null,
      average7: window.length ? Math.round((window.reduce((a, b) => a + b, 0) / window.length) * 10) / 10 : null,
      breaches: breaches.filter((b) => b.day === day).map((b) => ({ provider: b.provider, text: b.text })),
    });
  }
  return { days, providers, causes: CAUSES.filter((c) => seen.has(c)), total, reconciledDays };
}

/** Each provider's days of the range judged against the 30 days before each (`points` must reach back that far). */
export function controlSummary(points: DayPoint[], from: Date): Control {
  const judged = controlByProvider(points, dayKey(from));
  const short = new Map<string, number>();
  for (const j of judged)
    if (j.status === "not_enough_history") short.set(j.provider, (short.get(j.provider) ?? 0) + 1);
  return {
    breaches: judged.filter((j) => j.status === "breach").map((b) => ({ ...b, text: describeBreach(b) })),
    judgedDays: judged.filter((j) => j.status === "breach" || j.status === "within").length,
    notEnoughHistory: [...short].map(([provider, days]) => ({ provider, days })),
    windowDays: CONTROL_WINDOW_DAYS,
    minHistoryDays: CONTROL_MIN_HISTORY_DAYS,
  };
}

export type Overview = {
  range: { days: OverviewRange; from: string; to: string };
  series: Series;
  /** Each day of the range against its control limit (a p-chart per provider, lib/recon/trend.ts). */
  control: Control;
  /** Over the range's reconciled days: all providers together, and each. */
  verdict: Verdict;
  verdictByProvider: Record<string, Verdict>;
  ack: AckLatency;
  eventsToday: { total: number; webhooks: number; fetched: number; since: Date };
  outbox: { pending: number; oldestSeconds: number };
  stuck: StuckCounts & { staleMs: number };
  cases: Record<"OPEN" | "PROPOSED" | "WAITING" | "ESCALATED", number> & { total: number };
  alerts: { id: bigint; provider: string | null; kind: string; message: string; raisedAt: Date }[];
  lastRun: {
    id: bigint;
    provider: string;
    status: string;
    startedAt: Date;
    finishedAt: Date | null;
    error: string | null;
  } | null;
  /** The newest hourly ask of a provider for events it failed to deliver (lib/recon/gap-check.ts). */
  lastGapCheck: {
    provider: string;
    startedAt: Date;
    finishedAt: Date | null;
    found: number;
    stored: number;
    error: string | null;
  } | null;
  generatedAt: Date;
};

/** The reconciliation's own alerts (webhook silence) not cleared yet, newest first; lib/alerts/rules.ts notifies them. */
export function unclearedAlerts(tenantId: string, take = 20) {
  return prisma.alert.findMany({
    where: { tenantId, clearedAt: null },
    orderBy: { raisedAt: "desc" },
    take,
    select: { id: true, provider: true, kind: true, message: true, raisedAt: true },
  });
}

export async function overview(
  tenantId: string,
  o: { days: OverviewRange; staleMs: number; now?: Date },
): Promise<Overview> {
  const now = o.now ?? new Date();
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
  const from = new Date(to.getTime() - o.days * DAY);
  const today = new Date(to.getTime() - DAY);

  const [points, ack, events, outbox, stuck, cases, alerts, lastRun, lastGapCheck] = await Promise.all([
    // The control limit of the range's first day needs the 30 days before it (the average, six).
    discrepancyHistory(tenantId, new Date(from.getTime() - CONTROL_WINDOW_DAYS * DAY), to),
    ackLatencyP99(),
    prisma.rawEvent.groupBy({
      by: ["source"],
      where: { tenantId, receivedAt: { gte: today } },
      _count: { _all: true },
    }),
    prisma.$queryRaw<{ pending: number; oldest: number | null }[]>(Prisma.sql`
      SELECT count(*)::int AS pending, extract(epoch FROM now() - min(created_at))::float8 AS oldest
      FROM outbox WHERE tenant_id = ${tenantId}::uuid AND sent_at IS NULL`),
    countStuck(tenantId, o.staleMs),
    prisma.case.groupBy({
      by: ["status"],
      where: { tenantId, status: { in: [...OPEN_STATUSES] } },
      _count: { _all: true },
    }),
    unclearedAlerts(tenantId),
    latestReconRun(tenantId),
    prisma.gapCheck.findFirst({
      where: { tenantId },
      orderBy: { startedAt: "desc" },
      select: { provider: true, startedAt: true, finishedAt: true, found: true, stored: true, error: true },
    }),
  ]);

  const inRange = points.filter((p) => p.day >= dayKey(from));
  const control = controlSummary(points, from);
  const series = chartSeries(points, from, to, control.breaches);
  const totals = series.days.filter((d) => d.total !== null).map((d) => ({ day: d.day, discrepancies: d.total! }));
  const verdictByProvider = Object.fromEntries(
    series.providers.map((p) => [p, trendVerdict(inRange.filter((x) => x.provider === p))]),
  );
  const count = (s: string) => events.find((e) => e.source === s)?._count._all ?? 0;
  const caseCounts = { OPEN: 0, PROPOSED: 0, WAITING: 0, ESCALATED: 0, total: 0 };
  for (const c of cases) {
    caseCounts[c.status as Exclude<CaseStatus, "RESOLVED">] = c._count._all;
    caseCounts.total += c._count._all;
  }
  return {
    range: { days: o.days, from: dayKey(from), to: dayKey(today) },
    series,
    control,
    verdict: trendVerdict(totals),
    verdictByProvider,
    ack,
    eventsToday: {
      total: events.reduce((a, e) => a + e._count._all, 0),
      webhooks: count("WEBHOOK"),
      fetched: count("RECONCILIATION"),
      since: today,
    },
    outbox: { pending: outbox[0]?.pending ?? 0, oldestSeconds: outbox[0]?.oldest ?? 0 },
    stuck: { ...stuck, staleMs: o.staleMs },
    cases: caseCounts,
    alerts: alerts.map((a) => ({ ...a, provider: a.provider ?? null })),
    lastRun: lastRun && { ...lastRun, provider: lastRun.provider },
    lastGapCheck,
    generatedAt: now,
  };
}
