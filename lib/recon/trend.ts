// Step 7: make the rate visible. The daily discrepancy count per provider, over
// the items compared that day, and a verdict on its direction: the target is a
// number trending towards zero, and a flat non-zero rate is a defect, not weather.
// Each day's count is split by cause (why it happened), and each day is judged
// against a control limit computed from the days before it.
import { Prisma, prisma } from "@/lib/platform/db";
import { DiscrepancyCause, type Provider } from "@/lib/generated/prisma/enums";

/** Every cause in the schema's order: the order a stacked chart and a table list them in. */
export const CAUSES = Object.values(DiscrepancyCause) as DiscrepancyCause[];

export type DayPoint = {
  provider: Provider;
  day: string;
  compared: number;
  /** Every discrepancy found for the day except those matched within tolerance (their own, visible outcome). */
  discrepancies: number;
  theirsNotOurs: number;
  oursNotTheirs: number;
  mismatched: number;
  /** The same discrepancies by cause; causes with none are left out. Sums to `discrepancies`. */
  byCause: Partial<Record<DiscrepancyCause, number>>;
};

export async function discrepancyHistory(
  tenantId: string,
  from: Date,
  to: Date,
  provider?: Provider,
): Promise<DayPoint[]> {
  const rows = await prisma.$queryRaw<
    {
      provider: Provider;
      day: Date;
      compared: number;
      total: number;
      theirs: number;
      ours: number;
      mismatched: number;
      by_cause: Record<string, number> | null;
    }[]
  >(Prisma.sql`
    WITH days AS (
      SELECT provider, day, compared FROM recon_day_stats
      WHERE tenant_id = ${tenantId}::uuid AND day >= ${from}::date AND day < ${to}::date ${provider ? Prisma.sql`AND provider = ${provider}::"Provider"` : Prisma.empty}),
    per_cause AS (
      SELECT provider, day, cause, count(*)::int AS n,
        count(*) FILTER (WHERE bucket = 'THEIRS_NOT_OURS')::int AS theirs,
        count(*) FILTER (WHERE bucket = 'OURS_NOT_THEIRS')::int AS ours,
        count(*) FILTER (WHERE bucket = 'MISMATCH')::int AS mismatched
      FROM recon_discrepancies
      WHERE tenant_id = ${tenantId}::uuid AND day >= ${from}::date AND day < ${to}::date AND bucket <> 'WITHIN_TOLERANCE' ${provider ? Prisma.sql`AND provider = ${provider}::"Provider"` : Prisma.empty}
      GROUP BY provider, day, cause),
    found AS (
      SELECT provider, day, sum(n)::int AS total, sum(theirs)::int AS theirs, sum(ours)::int AS ours, sum(mismatched)::int AS mismatched,
             jsonb_object_agg(cause, n) AS by_cause
      FROM per_cause GROUP BY provider, day)
    SELECT coalesce(d.provider, f.provider) AS provider, coalesce(d.day, f.day) AS day, coalesce(d.compared, 0)::int AS compared,
           coalesce(f.total, 0) AS total, coalesce(f.theirs, 0) AS theirs, coalesce(f.ours, 0) AS ours, coalesce(f.mismatched, 0) AS mismatched,
           f.by_cause
    FROM days d FULL JOIN found f ON f.provider = d.provider AND f.day = d.day
    ORDER BY 1, 2`);
  return rows.map((r) => ({
    provider: r.provider,
    day: r.day.toISOString().slice(0, 10),
    compared: r.compared,
    discrepancies: r.total,
    theirsNotOurs: r.theirs,
    oursNotTheirs: r.ours,
    mismatched: r.mismatched,
    byCause: Object.fromEntries(CAUSES.filter((c) => r.by_cause?.[c]).map((c) => [c, r.by_cause![c]!])),
  }));
}

export type Verdict = {
  verdict: "falling" | "flat" | "rising";
  /** Least-squares slope, discrepancies per day per day. */
  slopePerDay: number;
  meanPerDay: number;
  days: number;
  reading: string;
};

/**
 * Least-squares slope over the days reconciled (days never reconciled are
 * unknown, not zero). "Flat" means the fitted line moves by less than 20% of the
 * mean over the period: at zero that is the goal, above zero it is a defect.
 */
export function trendVerdict(points: { day: string; discrepancies: number }[]): Verdict {
  const n = points.length;
  if (n === 0)
    return {
      verdict: "flat",
      slopePerDay: 0,
      meanPerDay: 0,
      days: 0,
      reading: "No reconciled days yet: run a reconciliation to start the trend.",
    };
  const x = points.map((p) => Date.parse(`${p.day}T00:00:00Z`) / 86_400_000);
  const y = points.map((p) => p.discrepancies);
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  const sxx = x.reduce((a, xi) => a + (xi - mx) ** 2, 0);
  const sxy = x.reduce((a, xi, i) => a + (xi - mx) * (y[i]! - my), 0);
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const span = n > 1 ? Math.max(...x) - Math.min(...x) : 0;
  const change = slope * span;
  const threshold = 0.2 * Math.max(my, 1);
  const verdict = change <= -threshold ? "falling" : change >= threshold ? "rising" : "flat";
  const perDay = my.toFixed(my < 10 ? 1 : 0);
  const reading =
    verdict === "falling"
      ? `Falling: about ${Math.abs(slope).toFixed(2)} fewer discrepancies each day (mean ${perDay}/day).`
      : verdict === "rising"
        ? `Rising: about ${slope.toFixed(2)} more discrepancies each day (mean ${perDay}/day). Find the cause.`
        : my === 0
          ? "Flat at zero: every settled movement was posted, once."
          : `Flat at about ${perDay}/day. A constant rate is a defect to fix, not weather.`;
  return { verdict, slopePerDay: slope, meanPerDay: my, days: n, reading };
}

/** The verdict over the last 30 reconciled days, per provider and for all providers together. */
export async function trendSummary(
  tenantId: string,
  now = new Date(),
): Promise<{ overall: Verdict; byProvider: Record<string, Verdict> }> {
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
  const from = new Date(to.getTime() - 30 * 86_400_000);
  const points = await discrepancyHistory(tenantId, from, to);
  const byDay = new Map<string, number>();
  const byProvider = new Map<string, { day: string; discrepancies: number }[]>();
  for (const p of points) {
    byDay.set(p.day, (byDay.get(p.day) ?? 0) + p.discrepancies);
    byProvider.set(p.provider, [...(byProvider.get(p.provider) ?? []), p]);
  }
  return {
    overall: trendVerdict([...byDay].map(([day, discrepancies]) => ({ day, discrepancies }))),
    byProvider: Object.fromEntries([...byProvider].map(([provider, ps]) => [provider, trendVerdict(ps)])),
  };
}

// ---------------------------------------------------------------------------
// The control limit: is a day's rate more than its process's noise explains?
//
// A p-chart rather than mean + 3σ of the daily counts: a day's count depends on
// how much was compared that day, and the volume varies (a weekend compares a
// third of a weekday), so a count limit flags busy days and misses quiet bad
// ones. The p-chart judges the rate p = discrepancies / compared against
// UCL = p̄ + 3·sqrt(p̄(1 − p̄) / n), with n the day's own compared count: the limit
// widens for a small day, where a few discrepancies are a large rate by chance.
// p̄ is pooled (Σ discrepancies / Σ compared) over the reconciled days of the 30
// calendar days before the day, the day itself excluded, so a bad day does not
// raise its own limit; earlier breaches stay in the baseline (the chart shows what
// the process has been, not what it should be). Fewer than 7 reconciled days
// before it and a day is not judged: a limit from two days is noise.

export const CONTROL_WINDOW_DAYS = 30;
export const CONTROL_MIN_HISTORY_DAYS = 7;

export type DayCount = { day: string; compared: number; discrepancies: number };

export type ControlStatus = "breach" | "within" | "not_enough_history" | "nothing_compared";

export type ControlJudgement = DayCount & {
  status: ControlStatus;
  /** Reconciled days (compared > 0) among the 30 before this one. */
  historyDays: number;
  /** discrepancies / compared; null when nothing was compared. */
  rate: number | null;
  /** p̄ and the upper control limit; null when the day is not judged. */
  centre: number | null;
  limit: number | null;
};

/**
 * Above the limit, decided in integers so a day exactly at the limit is exactly
 * not a breach: with p̄ = D/N, d/n − D/N > 3·sqrt(D(N − D) / N² / n) is, both sides
 * positive, (dN − Dn)² > 9·D·(N − D)·n.
 */
export function aboveControlLimit(day: { discrepancies: number; compared: number }, history: { D: number; N: number }) {
  const [d, n, D, N] = [day.discrepancies, day.compared, history.D, history.N].map(BigInt) as [
    bigint,
    bigint,
    bigint,
    bigint,
  ];
  const excess = d * N - D * n;
  return excess > 0n && excess * excess > 9n * D * (N - D) * n;
}

const DAY_MS = 86_400_000;
const dayNumber = (day: string) => Date.parse(`${day}T00:00:00Z`) / DAY_MS;

/**
 * Judges every day of one provider's series (days never reconciled are simply absent)
 * against the days before it in the same series; pass the 30 days before the first
 * day you want judged, or those days lack history they have.
 */
export function controlChart(days: DayCount[]): ControlJudgement[] {
  const sorted = [...days].sort((a, b) => a.day.localeCompare(b.day));
  return sorted.map((today) => {
    const t = dayNumber(today.day);
    const history = sorted.filter((p) => {
      const ago = t - dayNumber(p.day);
      return ago >= 1 && ago <= CONTROL_WINDOW_DAYS && p.compared > 0;
    });
    const D = history.reduce((a, p) => a + p.discrepancies, 0);
    const N = history.reduce((a, p) => a + p.compared, 0);
    const base = {
      day: today.day,
      compared: today.compared,
      discrepancies: today.discrepancies,
      historyDays: history.length,
      rate: today.compared > 0 ? today.discrepancies / today.compared : null,
      centre: null,
      limit: null,
    };
    if (today.compared === 0) return { ...base, status: "nothing_compared" as const };
    if (history.length < CONTROL_MIN_HISTORY_DAYS) return { ...base, status: "not_enough_history" as const };
    const centre = D / N;
    const limit = centre + 3 * Math.sqrt((centre * (1 - centre)) / today.compared);
    return {
      ...base,
      centre,
      limit,
      status: aboveControlLimit(today, { D, N }) ? ("breach" as const) : ("within" as const),
    };
  });
}

export type ProviderJudgement = ControlJudgement & { provider: Provider };

/** Each provider's days from `from` (YYYY-MM-DD) on, judged against its own history. */
export function controlByProvider(points: DayPoint[], from: string): ProviderJudgement[] {
  const providers = [...new Set(points.map((p) => p.provider))].sort();
  return providers.flatMap((provider) =>
    controlChart(points.filter((p) => p.provider === provider))
      .filter((j) => j.day >= from)
      .map((j) => ({ ...j, provider })),
  );
}

/** "4.1%": rates read as percentages, one decimal (two below 1%). */
export function percent(rate: number): string {
  const p = rate * 100;
  return `${p.toFixed(p > 0 && p < 1 ? 2 : 1)}%`;
}

/** "2026-11-03 stripe (rate 4.1% > limit 1.9%)": the words the overview and the CLI list a breach in. */
export function describeBreach(b: ProviderJudgement): string {
  return `${b.day} ${b.provider} (rate ${percent(b.rate ?? 0)} > limit ${percent(b.limit ?? 0)})`;
}
