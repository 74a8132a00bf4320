// The claim's state transitions after the claim is won, in one place: give it
// back for a retry (with back-off, counting attempts), give it back to wait for
// something outside it (a payment not posted yet; no attempt is used), or give up
// on it for good. Each is fenced by the claim's token: a claim that has moved on
// (taken over after a sweep) is left alone and the caller learns it was fenced.
//
//   CLAIMED (held) ──releaseClaim──────► CLAIMED (released, retry_at) ──take──► CLAIMED (held)
//                  ──releaseClaimToWait► CLAIMED (released, waiting_for)         │ past TALLY_MAX_ATTEMPTS
//                  ──failClaim─────────► FAILED                                  ▼ FAILED
import { config } from "@/lib/platform/config";
import { Prisma, prisma, type Tx } from "@/lib/platform/db";
import type { Provider } from "@/lib/generated/prisma/enums";
import type { OwnedClaim } from "@/lib/pipeline/claim";

/** Back-off for deferred claims: 1 s, 2 s, 4 s … capped (a minute by default). */
export function retryDelayMs(attempts: number): number {
  return Math.min(config().TALLY_RETRY_MAX_BACKOFF_MS, 500 * 2 ** Math.max(1, attempts));
}

export type Release = { claimId: bigint; version: number; failed: boolean; attempts: number };

/**
 * Releases a claim for any worker to retry after `retryAfterMs`, fenced by the
 * token (a claim that has moved on is left alone). Past the attempt limit the
 * claim and its raw event become FAILED and show as stuck instead of looping.
 */
export async function releaseClaim(
  claim: Pick<OwnedClaim, "claimId" | "version">,
  reason: string,
  retryAfterMs: number,
): Promise<Release | null> {
  const max = config().TALLY_MAX_ATTEMPTS;
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<
      { id: bigint; claim_version: number; status: string; attempts: number; raw_event_id: bigint }[]
    >(Prisma.sql`
      UPDATE processed_events SET
        claim_version = claim_version + 1,
        claimed_at = NULL,
        last_error = ${reason},
        retry_at = now() + ${retryAfterMs} * interval '1 millisecond',
        status = CASE WHEN attempts >= ${max} THEN 'FAILED'::"ClaimStatus" ELSE status END
      WHERE id = ${claim.claimId} AND claim_version = ${claim.version} AND status = 'CLAIMED'
      RETURNING id, claim_version, status::text, attempts, raw_event_id`);
    const row = rows[0];
    if (!row) return null;
    const failed = row.status === "FAILED";
    if (failed) await markRawFailed(tx, row.raw_event_id, `gave up after ${row.attempts} attempts: ${reason}`);
    return { claimId: row.id, version: row.claim_version, failed, attempts: row.attempts };
  });
}

/**
 * The payment's commit and a refund's release to wait for it both take this
 * lock, so one of them always sees the other: the release sees the posting (and
 * retries at once), or the commit sees the waiting refund (and wakes it).
 */
export async function lockPaymentReference(
  tx: Tx,
  tenantId: string,
  provider: Provider,
  paymentReference: string,
): Promise<void> {
  await tx.$executeRaw(
    Prisma.sql`SELECT pg_advisory_xact_lock(hashtextextended(${paymentLockKey(tenantId, provider, paymentReference)}, 0))`,
  );
}

/** The text a payment's advisory lock is keyed by (hashed): a batch takes several in one statement. */
export const paymentLockKey = (tenantId: string, provider: Provider, paymentReference: string) =>
  `payment:${tenantId}:${provider}:${paymentReference}`;

/**
 * Releases a refund until its payment is posted. Waiting is not failing: the
 * take that found the payment missing is given back (a payment webhook may come
 * hours late, or only through reconciliation, and the refund must still post).
 * The payment's commit wakes it (see lockPaymentReference); the slow recheck,
 * every TALLY_WAIT_RECHECK_MS, is only a backstop.
 */
export async function releaseClaimToWait(
  claim: Pick<OwnedClaim, "claimId" | "version" | "tenantId" | "provider">,
  reason: string,
  paymentReference: string,
): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    await lockPaymentReference(tx, claim.tenantId, claim.provider, paymentReference);
    const rows = await tx.$queryRaw<{ id: bigint }[]>(Prisma.sql`
      UPDATE processed_events SET
        claim_version = claim_version + 1,
        claimed_at = NULL,
        attempts = GREATEST(attempts - 1, 0),
        last_error = ${reason},
        waiting_for = ${paymentReference},
        retry_at = CASE
          WHEN EXISTS (SELECT 1 FROM postings WHERE tenant_id = ${claim.tenantId}::uuid AND provider = ${claim.provider}::"Provider" AND provider_reference = ${paymentReference} AND kind = 'PAYMENT') THEN now()
          ELSE now() + ${config().TALLY_WAIT_RECHECK_MS} * interval '1 millisecond' END
      WHERE id = ${claim.claimId} AND claim_version = ${claim.version} AND status = 'CLAIMED'
      RETURNING id`);
    return rows.length > 0;
  });
}

export async function markRawFailed(tx: Tx, rawEventId: bigint, error: string): Promise<void> {
  await tx.$executeRaw(
    Prisma.sql`UPDATE raw_events SET status = 'FAILED', last_error = ${error}, processed_at = now() WHERE id = ${rawEventId} AND status = 'CLAIMED'`,
  );
}

/** Gives up on a claim at once (retrying cannot help), fenced by the token. */
export async function failClaim(claim: Pick<OwnedClaim, "claimId" | "version">, reason: string): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ raw_event_id: bigint }[]>(Prisma.sql`
      UPDATE processed_events SET status = 'FAILED', claim_version = claim_version + 1, claimed_at = NULL, last_error = ${reason}
      WHERE id = ${claim.claimId} AND claim_version = ${claim.version} AND status = 'CLAIMED'
      RETURNING raw_event_id`);
    if (!rows[0]) return false;
    await markRawFailed(tx, rows[0].raw_event_id, reason);
    return true;
  });
}

/**
 * Releases a claim with the back-off its attempts so far call for (the attempts
 * are read now: the claim may have been taken several times since it was won).
 */
export async function releaseWithBackoff(
  claim: Pick<OwnedClaim, "claimId" | "version">,
  reason: string,
): Promise<Release | null> {
  const attempts =
    (await prisma.processedEvent.findUnique({ where: { id: claim.claimId }, select: { attempts: true } }))?.attempts ??
    1;
  return releaseClaim(claim, reason, retryDelayMs(attempts));
}

/**
 * Releases a claim whose provider could not be asked (its confirmation API is
 * unreachable, timing out or answering 5xx/429). Waiting for a provider is not
 * failing: the take is given back, so an outage of any length uses up no attempts
 * (Flutterwave has no reconciliation source to recover a payment failed here). The
 * back-off grows with the outage (the time waited so far, at least 1 s, capped at
 * TALLY_RETRY_MAX_BACKOFF_MS); provider_wait_since keeps when it began, for people.
 */
export async function releaseClaimToWaitForProvider(
  claim: Pick<OwnedClaim, "claimId" | "version">,
  reason: string,
): Promise<boolean> {
  const cap = config().TALLY_RETRY_MAX_BACKOFF_MS;
  const rows = await prisma.$queryRaw<{ id: bigint }[]>(Prisma.sql`
    UPDATE processed_events SET
      claim_version = claim_version + 1,
      claimed_at = NULL,
      attempts = GREATEST(attempts - 1, 0),
      last_error = ${reason},
      provider_wait_since = coalesce(provider_wait_since, now()),
      retry_at = now() + LEAST(${cap}::float8, GREATEST(1000, extract(epoch FROM now() - coalesce(provider_wait_since, now())) * 1000)) * interval '1 millisecond'
    WHERE id = ${claim.claimId} AND claim_version = ${claim.version} AND status = 'CLAIMED'
    RETURNING id`);
  return rows.length > 0;
}

/** OVER_REFUND: the claim held is a refund; OVER_WITHDRAWAL: a dispute. */
export type OverWithdrawalKind = "OVER_REFUND" | "OVER_WITHDRAWAL";

/**
 * Holds a refund or dispute that would take its payment's refunds and disputes past the
 * payment's amount: not posted, not retried, a conflict and a case for accountants with
 * the payment and everything withdrawn from it. Fenced like every transition.
 */
export async function holdOverWithdrawal(
  claim: Pick<OwnedClaim, "claimId" | "version" | "tenantId" | "provider" | "reference" | "rawEventId">,
  reason: string,
  kind: OverWithdrawalKind,
  evidence: { claimed: Record<string, unknown>; delivered: Record<string, unknown>; deliveredKey: string },
): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ raw_event_id: bigint }[]>(Prisma.sql`
      UPDATE processed_events SET status = 'HELD', claim_version = claim_version + 1, claimed_at = NULL, last_error = ${reason}, retry_at = NULL, waiting_for = NULL
      WHERE id = ${claim.claimId} AND claim_version = ${claim.version} AND status = 'CLAIMED'
      RETURNING raw_event_id`);
    if (!rows[0]) return false;
    await tx.$executeRaw(
      Prisma.sql`UPDATE raw_events SET status = 'CONFLICT', last_error = ${reason}, processed_at = now() WHERE id = ${claim.rawEventId} AND status = 'CLAIMED'`,
    );
    await tx.$executeRaw(Prisma.sql`
      WITH ins AS (
        INSERT INTO claim_conflicts (tenant_id, kind, provider, reference, processed_event_id, raw_event_id, claimed, delivered, delivered_key)
        VALUES (${claim.tenantId}::uuid, ${kind}::"ConflictKind", ${claim.provider}::"Provider", ${claim.reference}, ${claim.claimId}, ${claim.rawEventId}, ${JSON.stringify(evidence.claimed)}::jsonb, ${JSON.stringify(evidence.delivered)}::jsonb, ${evidence.deliveredKey})
        ON CONFLICT (processed_event_id, delivered_key) DO NOTHING RETURNING id)
      INSERT INTO cases (tenant_id, conflict_id, kind) SELECT ${claim.tenantId}::uuid, id, 'CONFLICT' FROM ins`);
    return true;
  });
}
