// Sending events back through the normal path after a fix: a FAILED or IGNORED
// event is parsed again; a stuck or FAILED claim is released for any worker to
// take (new fencing token). DONE work is never redone. Every request is audited.
import { recordAudit, type Actor } from "@/lib/admin/audit";
import { Prisma, prisma } from "@/lib/platform/db";
import type { RawEventStatus } from "@/lib/generated/prisma/enums";
import type { DomainResult } from "@/lib/platform/refusal";
import { CLAIMS_CHANNEL, RAW_EVENTS_CHANNEL, wake } from "@/lib/pipeline/wake";

export type Requeued = { rawEventId: bigint; action: "reparse" | "release-claims"; claims: number };

/**
 * Requeues one raw event of the tenant. `staleMs`: a CLAIMED event is only
 * released when its claims have been held this long (a live worker may be on it).
 */
export async function reprocessEvent(
  tenantId: string,
  rawEventId: bigint,
  actor: Actor,
  reason: string,
  staleMs: number,
): Promise<DomainResult<Requeued>> {
  const result = await prisma.$transaction(async (tx): Promise<DomainResult<Requeued>> => {
    const raw = await tx.$queryRaw<
      { id: bigint; status: RawEventStatus; tenant_id: string; body_purged_at: Date | null }[]
    >(Prisma.sql`
      SELECT id, status, tenant_id, body_purged_at FROM raw_events WHERE id = ${rawEventId} AND tenant_id = ${tenantId}::uuid FOR UPDATE`);
    const event = raw[0];
    if (!event) return { ok: false, reason: "not_found", message: `No event ${rawEventId} in this tenant` };
    // Parsing again needs the bytes; a claim released needs them too (the worker may parse them).
    if (event.body_purged_at)
      return {
        ok: false,
        reason: "body_purged",
        message: `Event ${rawEventId}'s body was removed on ${event.body_purged_at.toISOString()} after this tenant's retention of raw bodies; only its SHA-256 is kept, so it cannot be processed again`,
      };
    const claims = await tx.processedEvent.findMany({
      where: { rawEventId },
      select: { id: true, status: true, claimedAt: true },
    });
    const open = claims.filter((c) => c.status !== "DONE");
    // Both ways back are audited alike, with the status the event was in.
    const audited = (details: Record<string, unknown>) =>
      recordAudit(tx, {
        actor,
        action: "event.reprocess",
        subjectType: "raw_event",
        subjectId: String(rawEventId),
        tenantId,
        reason,
        details: { from: event.status, ...details },
      });

    if (open.length === 0 && (event.status === "FAILED" || event.status === "IGNORED")) {
      await tx.$executeRaw(
        Prisma.sql`UPDATE raw_events SET status = 'RECEIVED', last_error = NULL, note = NULL, processed_at = NULL WHERE id = ${rawEventId}`,
      );
      await audited({ action: "reparse" });
      return { ok: true, value: { rawEventId, action: "reparse", claims: 0 } };
    }
    if (open.length === 0) {
      return {
        ok: false,
        reason: "nothing_to_do",
        message: `Event ${rawEventId} is ${event.status}: there is nothing to reprocess`,
      };
    }
    const cutoff = Date.now() - staleMs;
    const releasable = open.filter(
      (c) => c.status === "FAILED" || (c.claimedAt !== null && c.claimedAt.getTime() <= cutoff) || c.claimedAt === null,
    );
    if (releasable.length === 0) {
      return {
        ok: false,
        reason: "in_flight",
        message: `Event ${rawEventId} is being processed right now (claimed less than ${Math.round(staleMs / 1000)} s ago); wait for it or for the sweep`,
      };
    }
    const ids = releasable.map((c) => c.id);
    await tx.$executeRaw(Prisma.sql`
      UPDATE processed_events SET status = 'CLAIMED', claimed_at = NULL, retry_at = NULL, waiting_for = NULL, claim_version = claim_version + 1, attempts = 0
      WHERE id = ANY(${ids.map(String)}::bigint[]) AND status <> 'DONE'`);
    await tx.$executeRaw(
      Prisma.sql`UPDATE raw_events SET status = 'CLAIMED', last_error = NULL, processed_at = NULL WHERE id = ${rawEventId} AND status <> 'DONE'`,
    );
    await audited({ action: "release-claims", claims: ids.map(String) });
    return { ok: true, value: { rawEventId, action: "release-claims", claims: ids.length } };
  });
  if (result.ok) wake(result.value.action === "reparse" ? RAW_EVENTS_CHANNEL : CLAIMS_CHANNEL);
  return result;
}

/** Requeues every FAILED event of the tenant (after a parser fix, say). */
export async function reprocessFailed(
  tenantId: string,
  actor: Actor,
  reason: string,
  staleMs: number,
): Promise<{ requeued: Requeued[]; skipped: { id: bigint; message: string }[] }> {
  const failed = await prisma.rawEvent.findMany({
    where: { tenantId, status: "FAILED" },
    select: { id: true },
    orderBy: { id: "asc" },
  });
  const requeued: Requeued[] = [];
  const skipped: { id: bigint; message: string }[] = [];
  for (const { id } of failed) {
    const r = await reprocessEvent(tenantId, id, actor, reason, staleMs);
    if (r.ok) requeued.push(r.value);
    else skipped.push({ id, message: r.message });
  }
  return { requeued, skipped };
}
