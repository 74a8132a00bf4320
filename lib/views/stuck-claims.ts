// What is stuck, for ops: claims a worker has held longer than the stale-claim
// threshold (the sweep will release them, but a person may want to look), refunds
// that have waited that long for their payment (reconciliation should bring the
// payment in), claims that gave up (FAILED), and events that failed to parse. Each can be sent back
// through the normal path with lib/pipeline/reprocess.ts.
import { Prisma, prisma } from "@/lib/platform/db";
import type { Provider } from "@/lib/generated/prisma/enums";

// Also: claims waiting for a provider whose confirmation API is down (any age: a
// person should know the provider is down), and conflicts (deliveries whose money
// disagrees with their claim, refunds past their payment), which only accountants decide.
export type StuckKind =
  | "stale_claim"
  | "waiting_claim"
  | "provider_wait"
  | "conflict"
  | "failed_claim"
  | "failed_event";

export type StuckItem = {
  kind: StuckKind;
  claimId: bigint | null;
  rawEventId: bigint;
  provider: Provider;
  reference: string | null;
  attempts: number;
  lastError: string | null;
  /** When the event first arrived. */
  receivedAt: Date;
  /** For a stale claim: since when a worker has held it; waiting for a provider: since when; a conflict: when found. */
  claimedAt: Date | null;
};

type Row = {
  kind: StuckKind;
  claim_id: bigint | null;
  raw_event_id: bigint;
  provider: Provider;
  reference: string | null;
  attempts: number;
  last_error: string | null;
  received_at: Date;
  claimed_at: Date | null;
};

function stuckSql(tenantId: string, staleMs: number) {
  return Prisma.sql`
    SELECT CASE WHEN c.status = 'FAILED' THEN 'failed_claim' WHEN c.claimed_at IS NULL THEN 'waiting_claim' ELSE 'stale_claim' END AS kind,
           c.id AS claim_id, c.raw_event_id, c.provider, c.provider_reference AS reference, c.attempts, c.last_error, r.received_at, c.claimed_at
    FROM processed_events c JOIN raw_events r ON r.id = c.raw_event_id
    WHERE c.tenant_id = ${tenantId}::uuid
      AND (c.status = 'FAILED'
        OR (c.status = 'CLAIMED' AND c.claimed_at < now() - ${staleMs} * interval '1 millisecond')
        OR (c.status = 'CLAIMED' AND c.claimed_at IS NULL AND c.waiting_for IS NOT NULL AND c.provider_wait_since IS NULL AND c.created_at < now() - ${staleMs} * interval '1 millisecond'))
    UNION ALL
    -- Waiting for the provider's confirmation API, however long: "waiting for provider" and its age.
    SELECT 'provider_wait', c.id, c.raw_event_id, c.provider, c.provider_reference, c.attempts, c.last_error, r.received_at, c.provider_wait_since
    FROM processed_events c JOIN raw_events r ON r.id = c.raw_event_id
    WHERE c.tenant_id = ${tenantId}::uuid AND c.status = 'CLAIMED' AND c.claimed_at IS NULL AND c.provider_wait_since IS NOT NULL
    UNION ALL
    -- Conflicts: one row per conflicting delivery (recorded once), never posted.
    SELECT 'conflict', k.processed_event_id, k.raw_event_id, k.provider, k.reference, 0, coalesce(r.last_error, k.kind::text), r.received_at, k.detected_at
    FROM claim_conflicts k JOIN raw_events r ON r.id = k.raw_event_id JOIN cases cs ON cs.conflict_id = k.id
    WHERE k.tenant_id = ${tenantId}::uuid AND cs.status <> 'RESOLVED'
    UNION ALL
    -- Events that failed before claiming anything (unparseable): one row each.
    SELECT 'failed_event', NULL, r.id, r.provider, NULL, r.attempts, r.last_error, r.received_at, NULL
    FROM raw_events r
    WHERE r.tenant_id = ${tenantId}::uuid AND r.status = 'FAILED'
      AND NOT EXISTS (SELECT 1 FROM processed_events c WHERE c.raw_event_id = r.id AND c.status <> 'DONE')`;
}

/** The oldest stuck items first (they have waited longest). */
export async function listStuck(tenantId: string, staleMs: number, limit = 200): Promise<StuckItem[]> {
  const rows = await prisma.$queryRaw<Row[]>(
    Prisma.sql`${stuckSql(tenantId, staleMs)} ORDER BY received_at, raw_event_id LIMIT ${limit}`,
  );
  return rows.map((r) => ({
    kind: r.kind,
    claimId: r.claim_id,
    rawEventId: r.raw_event_id,
    provider: r.provider,
    reference: r.reference,
    attempts: r.attempts,
    lastError: r.last_error,
    receivedAt: r.received_at,
    claimedAt: r.claimed_at,
  }));
}

export type StuckCounts = Record<StuckKind, number> & { total: number };

export async function countStuck(tenantId: string, staleMs: number): Promise<StuckCounts> {
  const rows = await prisma.$queryRaw<{ kind: StuckKind; n: number }[]>(
    Prisma.sql`SELECT kind, count(*)::int AS n FROM (${stuckSql(tenantId, staleMs)}) s GROUP BY kind`,
  );
  const counts: StuckCounts = {
    stale_claim: 0,
    waiting_claim: 0,
    provider_wait: 0,
    conflict: 0,
    failed_claim: 0,
    failed_event: 0,
    total: 0,
  };
  for (const r of rows) {
    counts[r.kind] = r.n;
    counts.total += r.n;
  }
  return counts;
}
