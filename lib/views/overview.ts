// The overview: step 7's rate made visible (the daily discrepancy count per
// provider, a 7-day moving average and the verdict on its direction) beside the
// figures ops watch: acknowledgement latency, what arrived today, the outbox,
// what is stuck, open cases and uncleared alerts. One read per refresh.
import { ackLatencyP99, type AckLatency } from "@/lib/views/ack-latency";
import { OPEN_STATUSES } from "@/lib/cases/cases";
import { Prisma, prisma } from "@/lib/platform/db";
import type { CaseStatus } from "@/lib/generated/prisma/enums";
import { discrepancyHistory, trendVerdict, type DayPoint, type Verdict } from "@/lib/recon/trend";
import { countStuck, type StuckCounts } from "@/lib/views/stuck-claims";
import { latestReconRun } from "@/lib/recon/runs";

const DAY = 86_400_000;
export const OVERVIEW_RANGES = [30, 90] as const;
export type OverviewRange = (typeof OVERVIEW_RANGES)[number];

/** One day of the chart. Days never reconciled are unknown (null), not zero. */
export type ChartDay = {
  day: string;
  total: number | null;
  byProvider: Record<string, number | null>;
  average7: number | null;
};

export type Series = { days: ChartDay[]; providers: string[]; total: number; reconciledDays: number };

const dayKey = (d: Date) => d.toISOString().slice(0, 10);

/**
 * Every day of the range with each provider's count, and the trailing 7-day mean
 * of the daily total over the days that were reconciled (it needs the six days
 * before the range, so `points` should start there).
 */
export function chartSeries(points: DayPoint[], from: Date, to: Date): Series {
  const providers = [...new Set(points.map((p) => p.provider))].sort();
  const byDay = new Map<string, Map<string, number>>();
  for (const p of points) {
    if (!byDay.has(p.day)) byDay.set(p.day, new Map());
    byDay.get(p.day)!.set(p.provider, p.discrepancies);
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
      average7: window.length ? Math.round((window.reduce((a, b) => a + b, 0) / window.length) * 10) / 10 : null,
    });
  }
  return { days, providers, total, reconciledDays };
}

export type Overview = {
  range: { days: OverviewRange; from: string; to: string };
  series: Series;
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
    discrepancyHistory(tenantId, new Date(from.getTime() - 6 * DAY), to),
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
  const series = chartSeries(points, from, to);
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
