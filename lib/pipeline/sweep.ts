// Step 5: the sweep, which assumes workers die. Claims held longer than the
// stale threshold and not DONE are released (new fencing token) for any worker
// to reprocess; past the attempt limit they become FAILED and show as stuck.
import { config } from "@/lib/platform/config";
import { markRawFailed } from "@/lib/pipeline/claim-state";
import { Prisma, prisma } from "@/lib/platform/db";
import { CLAIMS_CHANNEL, wake } from "@/lib/pipeline/wake";

// One sweeper at a time across replicas: a transaction-scoped advisory lock.
const SWEEP_LOCK = 0x7a11_5e01;

export type SweptClaim = { id: bigint; key: string; attempts: number; failed: boolean; heldForMs: number };
export type SweepResult = { released: SweptClaim[] };

/**
 * Returns null when another replica is sweeping right now. `whileLocked` runs with
 * the lock held, before the release: tests use it to hold one sweeper inside while
 * another tries to get in.
 */
export async function sweepStaleClaims(
  staleMs = config().TALLY_STALE_CLAIM_MS,
  whileLocked?: () => Promise<void>,
): Promise<SweepResult | null> {
  const max = config().TALLY_MAX_ATTEMPTS;
  const result = await prisma.$transaction(async (tx) => {
    const [{ locked }] = (await tx.$queryRaw<{ locked: boolean }[]>(
      Prisma.sql`SELECT pg_try_advisory_xact_lock(${SWEEP_LOCK}) AS locked`,
    )) as [{ locked: boolean }];
    if (!locked) return null;
    if (whileLocked) await whileLocked();
    const rows = await tx.$queryRaw<
      { id: bigint; idempotency_key: string; attempts: number; status: string; raw_event_id: bigint; held_ms: number }[]
    >(Prisma.sql`
      WITH stale AS (
        SELECT id, claimed_at FROM processed_events
        WHERE status = 'CLAIMED' AND claimed_at < now() - ${staleMs} * interval '1 millisecond'
        FOR UPDATE SKIP LOCKED)
      UPDATE processed_events p SET
        claim_version = p.claim_version + 1,
        claimed_at = NULL,
        retry_at = NULL,
        last_error = CASE WHEN p.attempts >= ${max} THEN 'gave up: claim went stale ' || p.attempts || ' times' ELSE 'claim went stale; released by the sweep' END,
        status = CASE WHEN p.attempts >= ${max} THEN 'FAILED'::"ClaimStatus" ELSE p.status END
      FROM stale WHERE p.id = stale.id
      RETURNING p.id, p.idempotency_key, p.attempts, p.status::text, p.raw_event_id, (extract(epoch FROM now() - stale.claimed_at) * 1000)::float8 AS held_ms`);
    for (const r of rows)
      if (r.status === "FAILED")
        await markRawFailed(tx, r.raw_event_id, `gave up after ${r.attempts} attempts: the claim went stale each time`);
    return {
      released: rows.map((r) => ({
        id: r.id,
        key: r.idempotency_key,
        attempts: r.attempts,
        failed: r.status === "FAILED",
        heldForMs: Math.round(r.held_ms),
      })),
    };
  });
  if (result?.released.some((r) => !r.failed)) wake(CLAIMS_CHANNEL);
  return result;
}
