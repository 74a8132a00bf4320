// Reading reconciliation runs for people: the list (window, source, who started
// it, bucket counts, duration, outcome) and one run's discrepancies by bucket.
// Matched lines are counted, never stored one by one.
import { prisma } from "@/lib/platform/db";
import type { DiscrepancyBucket, Provider } from "@/lib/generated/prisma/enums";

/**
 * What started a run, in words: the daily schedule, a person, an API token, the
 * CLI, or `npm start`'s demo. The demo's run takes the day's scheduled slot (so
 * the schedule does not repeat it) but was not started by the schedule: the
 * actor says who started a run, scheduledFor only which day's slot it holds.
 */
export type RunStarter = { kind: "schedule" | "person" | "api_token" | "cli" | "demo" | "system"; label: string };

export const SCHEDULER_LABEL = "scheduler";
export const DEMO_LABEL = "demo";

export function runStarter(run: { actorType: string; actorLabel: string; scheduledFor: Date | null }): RunStarter {
  if (run.actorType === "USER") return { kind: "person", label: run.actorLabel };
  if (run.actorType === "API_TOKEN") return { kind: "api_token", label: `API ${run.actorLabel}` };
  if (run.actorType === "CLI") return { kind: "cli", label: `the CLI (${run.actorLabel})` };
  if (run.actorLabel === SCHEDULER_LABEL)
    return {
      kind: "schedule",
      label: run.scheduledFor
        ? `the daily schedule, for ${run.scheduledFor.toISOString().slice(0, 10)}`
        : "the daily schedule",
    };
  if (run.actorLabel === DEMO_LABEL) return { kind: "demo", label: "the demo, at start-up" };
  if (run.actorLabel === "demo seed") return { kind: "demo", label: "the demo's seeded history" };
  return { kind: "system", label: run.actorLabel };
}

/** The newest run of a tenant (of one provider when given): the overview's "last run", the alert on a failed run. */
export function latestReconRun(tenantId: string, provider?: Provider) {
  return prisma.reconRun.findFirst({
    where: { tenantId, ...(provider && { provider }) },
    orderBy: { id: "desc" },
    select: {
      id: true,
      provider: true,
      status: true,
      startedAt: true,
      finishedAt: true,
      error: true,
      scheduledFor: true,
    },
  });
}

export async function listRuns(tenantId: string, o: { limit?: number; beforeId?: bigint } = {}) {
  const limit = Math.min(o.limit ?? 25, 100);
  const rows = await prisma.reconRun.findMany({
    where: { tenantId, ...(o.beforeId && { id: { lt: o.beforeId } }) },
    orderBy: { id: "desc" },
    take: limit + 1,
  });
  const runs = rows.slice(0, limit).map((r) => ({ ...r, startedBy: runStarter(r) }));
  return { runs, nextBefore: rows.length > limit ? runs[runs.length - 1]!.id : null };
}

export type RunPage = Awaited<ReturnType<typeof listRuns>>;

export const BUCKETS: readonly DiscrepancyBucket[] = ["THEIRS_NOT_OURS", "OURS_NOT_THEIRS", "MISMATCH"];
/** A bank import's run (lib/bank/match.ts) finds only what is not at the bank. */
const BANK_BUCKETS: readonly DiscrepancyBucket[] = ["BANK_UNMATCHED"];

/** A run with the discrepancies it saw, grouped by bucket (up to `perBucket` each, and how many there were). */
export async function getRun(tenantId: string, runId: bigint, perBucket = 500) {
  const run = await prisma.reconRun.findFirst({ where: { id: runId, tenantId } });
  if (!run) return null;
  const startedBy = runStarter(run);
  const buckets = await Promise.all(
    (run.source === "BANK" ? BANK_BUCKETS : BUCKETS).map(async (bucket) => {
      const where = { tenantId, bucket, runItems: { some: { runId } } };
      const [items, count] = await Promise.all([
        prisma.reconDiscrepancy.findMany({
          where,
          orderBy: [{ day: "asc" }, { reference: "asc" }],
          take: perBucket,
          select: {
            id: true,
            reference: true,
            day: true,
            state: true,
            possibleTiming: true,
            theirAmount: true,
            theirCurrency: true,
            ourAmount: true,
            ourCurrency: true,
            postingId: true,
            rawEventId: true,
            note: true,
            firstRunId: true,
            case: { select: { id: true, status: true } },
          },
        }),
        prisma.reconDiscrepancy.count({ where }),
      ]);
      return { bucket, count, items };
    }),
  );
  return { run, startedBy, buckets };
}

export type RunDetail = NonNullable<Awaited<ReturnType<typeof getRun>>>;
