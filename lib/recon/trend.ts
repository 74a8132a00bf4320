// Step 7: make the rate visible. The daily discrepancy count per provider, over
// the items compared that day, and a verdict on its direction: the target is a
// number trending towards zero, and a flat non-zero rate is a defect, not weather.
import { Prisma, prisma } from "@/lib/platform/db";
import type { Provider } from "@/lib/generated/prisma/enums";

export type DayPoint = {
  provider: Provider;
  day: string;
  compared: number;
  discrepancies: number;
  theirsNotOurs: number;
  oursNotTheirs: number;
  mismatched: number;
};

export async function discrepancyHistory(
  tenantId: string,
  from: Date,
  to: Date,
  provider?: Provider,
): Promise<DayPoint[]> {
  const rows = await prisma.$queryRaw<
    { provider: Provider; day: Date; compared: number; theirs: number; ours: number; mismatched: number }[]
  >(Prisma.sql`
    WITH days AS (
      SELECT provider, day, compared FROM recon_day_stats
      WHERE tenant_id = ${tenantId}::uuid AND day >= ${from}::date AND day < ${to}::date ${provider ? Prisma.sql`AND provider = ${provider}::"Provider"` : Prisma.empty}),
    found AS (
      SELECT provider, day,
        count(*) FILTER (WHERE bucket = 'THEIRS_NOT_OURS')::int AS theirs,
        count(*) FILTER (WHERE bucket = 'OURS_NOT_THEIRS')::int AS ours,
        count(*) FILTER (WHERE bucket = 'MISMATCH')::int AS mismatched
      FROM recon_discrepancies
      WHERE tenant_id = ${tenantId}::uuid AND day >= ${from}::date AND day < ${to}::date ${provider ? Prisma.sql`AND provider = ${provider}::"Provider"` : Prisma.empty}
      GROUP BY provider, day)
    SELECT coalesce(d.provider, f.provider) AS provider, coalesce(d.day, f.day) AS day, coalesce(d.compared, 0)::int AS compared,
           coalesce(f.theirs, 0) AS theirs, coalesce(f.ours, 0) AS ours, coalesce(f.mismatched, 0) AS mismatched
    FROM days d FULL JOIN found f ON f.provider = d.provider AND f.day = d.day
    ORDER BY 1, 2`);
  return rows.map((r) => ({
    provider: r.provider,
    day: r.day.toISOString().slice(0, 10),
    compared: r.compared,
    discrepancies: r.theirs + r.ours + r.mismatched,
    theirsNotOurs: r.theirs,
    oursNotTheirs: r.ours,
    mismatched: r.mismatched,
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
