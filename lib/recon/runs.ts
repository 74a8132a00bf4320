// Reading reconciliation runs for people: the list (window, source, who started
// it, bucket counts, duration, outcome) and one run's discrepancies by bucket.
// Matched lines are counted, never stored one by one.
import { prisma } from "@/lib/platform/db";
import type { DiscrepancyBucket } from "@/lib/generated/prisma/enums";

export async function listRuns(tenantId: string, o: { limit?: number; beforeId?: bigint } = {}) {
  const limit = Math.min(o.limit ?? 25, 100);
  const rows = await prisma.reconRun.findMany({
    where: { tenantId, ...(o.beforeId && { id: { lt: o.beforeId } }) },
    orderBy: { id: "desc" },
    take: limit + 1,
  });
  const runs = rows.slice(0, limit);
  return { runs, nextBefore: rows.length > limit ? runs[runs.length - 1]!.id : null };
}

export type RunPage = Awaited<ReturnType<typeof listRuns>>;

export const BUCKETS: readonly DiscrepancyBucket[] = ["THEIRS_NOT_OURS", "OURS_NOT_THEIRS", "MISMATCH"];

/** A run with the discrepancies it saw, grouped by bucket (up to `perBucket` each, and how many there were). */
export async function getRun(tenantId: string, runId: bigint, perBucket = 500) {
  const run = await prisma.reconRun.findFirst({ where: { id: runId, tenantId } });
  if (!run) return null;
  const buckets = await Promise.all(
    BUCKETS.map(async (bucket) => {
      const where = { tenantId, bucket, runItems: { some: { runId } } };
      const [items, count] = await Promise.all([
        prisma.reconDiscrepancy.findMany({
          where,
          orderBy: [{ day: "asc" }, { reference: "asc" }],
          take: perBucket,
          select: { id: true, reference: true, day: true, state: true, possibleTiming: true, theirAmount: true, theirCurrency: true, ourAmount: true, ourCurrency: true, postingId: true, rawEventId: true, note: true, firstRunId: true, case: { select: { id: true, status: true } } },
        }),
        prisma.reconDiscrepancy.count({ where }),
      ]);
      return { bucket, count, items };
    }),
  );
  return { run, buckets };
}

export type RunDetail = NonNullable<Awaited<ReturnType<typeof getRun>>>;
