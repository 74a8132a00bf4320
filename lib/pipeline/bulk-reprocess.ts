// Bulk reprocessing (issue #21.3): every event a filter matches goes back through
// the normal worker path in one audited request, as reprocessEvent does for one:
//   - an event that FAILED or was IGNORED with no claim left open is parsed again;
//   - an event whose open claims all FAILED has them released (new fencing token).
// Anything else (a claim a worker holds, a HELD over-refund, DONE work) is not
// eligible, so the preview counts only what will really be sent back, and the
// request is refused when the filter matches another number by the time it runs.
// The claim protocol still posts each payment once: this only requeues.
// A job remembers its events and their state before, so progress is read from the
// events themselves and a cancel returns those no worker has taken yet.
import { recordAudit, type Actor } from "@/lib/admin/audit";
import { Prisma, prisma } from "@/lib/platform/db";
import type { DomainResult } from "@/lib/platform/refusal";
import { CLAIMS_CHANNEL, RAW_EVENTS_CHANNEL, wake } from "@/lib/pipeline/wake";

export type BulkFilter = {
  status: "FAILED" | "IGNORED";
  provider?: string;
  /** A prefix of a movement reference (pi_…) or of the delivery id (evt_…), matched literally. */
  reference?: string;
  from?: Date;
  to?: Date;
};

/** One request sends back at most this many events; narrow the filter for more. */
export const MAX_BULK = 10_000;

// Eligible: no open claim (reparse), or every open claim FAILED (release).
function eligible(tenantId: string, f: BulkFilter): Prisma.Sql {
  const parts = [
    Prisma.sql`r.tenant_id = ${tenantId}::uuid`,
    Prisma.sql`r.status = ${f.status}::"RawEventStatus"`,
    Prisma.sql`NOT EXISTS (SELECT 1 FROM processed_events p WHERE p.raw_event_id = r.id AND p.status IN ('CLAIMED', 'HELD'))`,
    // A body removed after its retention cannot be parsed again (reprocessEvent refuses it too).
    Prisma.sql`r.raw_body IS NOT NULL`,
  ];
  if (f.provider) parts.push(Prisma.sql`r.provider = ${f.provider}::"Provider"`);
  if (f.reference) {
    const n = f.reference.length;
    parts.push(Prisma.sql`(left(r.delivery_id, ${n}) = ${f.reference}
      OR EXISTS (SELECT 1 FROM unnest(r.movement_references) AS ref WHERE left(ref, ${n}) = ${f.reference}))`);
  }
  if (f.from) parts.push(Prisma.sql`r.received_at >= ${f.from}`);
  if (f.to) parts.push(Prisma.sql`r.received_at < ${f.to}`);
  return Prisma.join(parts, " AND ");
}

/** How many events the filter would send back now: the preview a request confirms against. */
export async function previewBulkReprocess(tenantId: string, f: BulkFilter): Promise<number> {
  const [row] = await prisma.$queryRaw<{ n: bigint }[]>(
    Prisma.sql`SELECT count(*) AS n FROM raw_events r WHERE ${eligible(tenantId, f)}`,
  );
  return Number(row?.n ?? 0);
}

export type BulkStarted = { jobId: bigint; requeued: number; reparse: number; released: number };

export async function startBulkReprocess(
  tenantId: string,
  request: { filter: BulkFilter; expected: number; reason: string },
  actor: Actor,
): Promise<DomainResult<BulkStarted>> {
  const result = await prisma.$transaction(async (tx): Promise<DomainResult<BulkStarted>> => {
    // Locked in id order: what is counted is what is sent back, and two requests for
    // the same events queue behind each other (the second then finds none eligible).
    const events = await tx.$queryRaw<{ id: bigint; status: string; last_error: string | null; failed: bigint[] }[]>(
      Prisma.sql`
      SELECT r.id, r.status::text, r.last_error,
             ARRAY(SELECT p.id FROM processed_events p WHERE p.raw_event_id = r.id AND p.status = 'FAILED') AS failed
      FROM raw_events r WHERE ${eligible(tenantId, request.filter)} ORDER BY r.id FOR UPDATE OF r LIMIT ${MAX_BULK + 1}`,
    );
    if (events.length > MAX_BULK)
      return {
        ok: false,
        reason: "too_many",
        message: `The filter matches more than ${MAX_BULK.toLocaleString("en")} events: narrow it (provider, dates, reference) and send them in parts`,
      };
    if (events.length !== request.expected)
      return {
        ok: false,
        reason: "preview_changed",
        message: `The filter matched ${request.expected} event(s) in your preview and matches ${events.length} now: preview again before reprocessing`,
      };
    const reparse = events.filter((e) => e.failed.length === 0).map((e) => String(e.id));
    const release = events.filter((e) => e.failed.length > 0);
    const [job] = await tx.$queryRaw<{ id: bigint }[]>(Prisma.sql`
      INSERT INTO bulk_reprocess_jobs (tenant_id, filter, reason, actor_type, actor_label, requested)
      VALUES (${tenantId}::uuid, ${JSON.stringify(request.filter)}::jsonb, ${request.reason},
              ${actor.type}::"ActorType", ${actor.label}, ${events.length})
      RETURNING id`);
    const jobId = job!.id;
    await tx.$executeRaw(Prisma.sql`
      INSERT INTO bulk_reprocess_items (job_id, raw_event_id, from_status, from_error)
      SELECT ${jobId}, r.id, r.status, r.last_error FROM raw_events r WHERE r.id = ANY(${events.map((e) => String(e.id))}::bigint[])`);
    if (reparse.length)
      await tx.$executeRaw(Prisma.sql`
        UPDATE raw_events SET status = 'RECEIVED', last_error = NULL, note = NULL, processed_at = NULL
        WHERE id = ANY(${reparse}::bigint[])`);
    if (release.length) {
      await tx.$executeRaw(Prisma.sql`
        UPDATE processed_events SET status = 'CLAIMED', claimed_at = NULL, retry_at = NULL, waiting_for = NULL,
               claim_version = claim_version + 1, attempts = 0
        WHERE id = ANY(${release.flatMap((e) => e.failed.map(String))}::bigint[]) AND status = 'FAILED'`);
      await tx.$executeRaw(Prisma.sql`
        UPDATE raw_events SET status = 'CLAIMED', last_error = NULL, processed_at = NULL
        WHERE id = ANY(${release.map((e) => String(e.id))}::bigint[])`);
    }
    await recordAudit(tx, {
      actor,
      action: "event.bulk_reprocess",
      subjectType: "bulk_reprocess_job",
      subjectId: String(jobId),
      tenantId,
      reason: request.reason,
      details: {
        filter: request.filter,
        count: events.length,
        reparse: reparse.length,
        released: release.length,
        ids: events.slice(0, 100).map((e) => String(e.id)),
      },
    });
    return { ok: true, value: { jobId, requeued: events.length, reparse: reparse.length, released: release.length } };
  });
  if (result.ok) {
    if (result.value.reparse) wake(RAW_EVENTS_CHANNEL);
    if (result.value.released) wake(CLAIMS_CHANNEL);
  }
  return result;
}

export type BulkProgress = {
  id: bigint;
  state: "RUNNING" | "DONE" | "CANCELLED";
  requested: number;
  /** Not yet finished by a worker (queued, or released and not taken). */
  pending: number;
  /** Finished: posted, a duplicate, ignored, or a conflict recorded. */
  finished: number;
  /** Failed again: see each event's error. */
  failed: number;
  /** Sent back to where they were by a cancel. */
  returned: number;
  reason: string;
  actorLabel: string;
  createdAt: Date;
  finishedAt: Date | null;
  cancelledBy: string | null;
  filter: unknown;
};

export async function bulkJobs(tenantId: string, o: { jobId?: bigint; limit?: number } = {}): Promise<BulkProgress[]> {
  const rows = await prisma.$queryRaw<
    (Omit<BulkProgress, "pending" | "finished" | "failed" | "returned"> & {
      pending: number;
      finished: number;
      failed: number;
      returned: number;
    })[]
  >(Prisma.sql`
    SELECT j.id, j.state::text AS state, j.requested, j.reason, j.actor_label AS "actorLabel", j.created_at AS "createdAt",
           j.finished_at AS "finishedAt", j.cancelled_by AS "cancelledBy", j.filter,
           coalesce(j.cancelled_returned, 0) AS returned,
           count(*) FILTER (WHERE r.status IN ('RECEIVED', 'CLAIMED'))::int AS pending,
           count(*) FILTER (WHERE r.status IN ('DONE', 'DUPLICATE', 'IGNORED', 'CONFLICT'))::int AS finished,
           count(*) FILTER (WHERE r.status = 'FAILED')::int AS failed
    FROM bulk_reprocess_jobs j
    JOIN bulk_reprocess_items i ON i.job_id = j.id JOIN raw_events r ON r.id = i.raw_event_id
    WHERE j.tenant_id = ${tenantId}::uuid ${o.jobId ? Prisma.sql`AND j.id = ${o.jobId}` : Prisma.empty}
    GROUP BY j.id ORDER BY j.id DESC LIMIT ${o.limit ?? 20}`);
  // A cancelled job's returned events count as what they were, not as failures of the job.
  const jobs = rows.map((r) => ({ ...r, failed: Math.max(0, r.failed - r.returned) }));
  // A running job with nothing pending is done: recorded the first time it is seen so.
  const done = jobs.filter((j) => j.state === "RUNNING" && j.pending === 0).map((j) => String(j.id));
  if (done.length) {
    await prisma.$executeRaw(Prisma.sql`
      UPDATE bulk_reprocess_jobs SET state = 'DONE', finished_at = now() WHERE id = ANY(${done}::bigint[]) AND state = 'RUNNING'`);
    for (const j of jobs) if (done.includes(String(j.id))) j.state = "DONE";
  }
  return jobs;
}

/**
 * Stops a running job: its events that no worker has taken yet go back to the
 * state and error they had (queue rows and released claims a worker holds right
 * now are skipped, not waited for: those finish normally). Audited.
 */
export async function cancelBulkReprocess(
  tenantId: string,
  jobId: bigint,
  actor: Actor,
  reason: string,
): Promise<DomainResult<{ jobId: bigint; returned: number }>> {
  return prisma.$transaction(async (tx) => {
    const [job] = await tx.$queryRaw<{ state: string }[]>(Prisma.sql`
      SELECT state::text FROM bulk_reprocess_jobs WHERE id = ${jobId} AND tenant_id = ${tenantId}::uuid FOR UPDATE`);
    if (!job) return { ok: false, reason: "not_found", message: `No bulk reprocessing #${jobId} in this tenant` };
    if (job.state !== "RUNNING")
      return { ok: false, reason: "not_open", message: `Bulk reprocessing #${jobId} is ${job.state.toLowerCase()}` };
    const note = `bulk reprocessing #${jobId} cancelled before a worker took it`;
    // Parsed-again events still waiting in the queue: lock their queue rows as the worker's pick-up does.
    const queued = await tx.$queryRaw<{ id: bigint }[]>(Prisma.sql`
      WITH free AS (
        SELECT q.raw_event_id FROM raw_event_queue q JOIN bulk_reprocess_items i ON i.raw_event_id = q.raw_event_id
        WHERE i.job_id = ${jobId} FOR UPDATE OF q SKIP LOCKED)
      UPDATE raw_events r SET status = i.from_status, last_error = coalesce(i.from_error, ${note}), processed_at = now()
      FROM bulk_reprocess_items i
      WHERE i.job_id = ${jobId} AND i.raw_event_id = r.id AND r.status = 'RECEIVED' AND r.id IN (SELECT raw_event_id FROM free)
      RETURNING r.id`);
    // Released claims no worker has taken (claimed_at NULL): FAILED again, with a new fencing token.
    const claims = await tx.$queryRaw<{ raw_event_id: bigint }[]>(Prisma.sql`
      WITH free AS (
        SELECT p.id FROM processed_events p JOIN bulk_reprocess_items i ON i.raw_event_id = p.raw_event_id
        WHERE i.job_id = ${jobId} AND p.status = 'CLAIMED' AND p.claimed_at IS NULL FOR UPDATE OF p SKIP LOCKED)
      UPDATE processed_events p SET status = 'FAILED', claim_version = claim_version + 1, last_error = ${note}
      WHERE p.id IN (SELECT id FROM free) RETURNING p.raw_event_id`);
    const back = [...new Set(claims.map((c) => String(c.raw_event_id)))];
    // An event goes back to FAILED only when none of its claims is still with a worker.
    const released = back.length
      ? await tx.$queryRaw<{ id: bigint }[]>(Prisma.sql`
          UPDATE raw_events r SET status = i.from_status, last_error = coalesce(i.from_error, ${note}), processed_at = now()
          FROM bulk_reprocess_items i
          WHERE i.job_id = ${jobId} AND i.raw_event_id = r.id AND r.id = ANY(${back}::bigint[]) AND r.status = 'CLAIMED'
            AND NOT EXISTS (SELECT 1 FROM processed_events p WHERE p.raw_event_id = r.id AND p.status = 'CLAIMED')
          RETURNING r.id`)
      : [];
    const returned = queued.length + released.length;
    await tx.$executeRaw(Prisma.sql`
      UPDATE bulk_reprocess_jobs SET state = 'CANCELLED', finished_at = now(), cancelled_by = ${actor.label},
             cancelled_returned = ${returned}
      WHERE id = ${jobId}`);
    await recordAudit(tx, {
      actor,
      action: "event.bulk_reprocess_cancel",
      subjectType: "bulk_reprocess_job",
      subjectId: String(jobId),
      tenantId,
      reason,
      details: { returned },
    });
    return { ok: true, value: { jobId, returned } };
  });
}
