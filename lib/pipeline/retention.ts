// raw_events by month, and raw bodies removed after each tenant's retention
// (issue #21.4). The worker's maintenance loop runs maintainRawEvents: partitions
// made ahead of time, then each tenant's bodies older than its retention removed
// in small batches. What stays for ever: the row, its body's sha256, its claims,
// postings, conflicts and audit. Partitions are never dropped: claims and
// postings reference their raw events, and retention is per tenant, not per month.
import { createHash } from "node:crypto";
import { pool } from "@/lib/platform/db";
import { pruneRefusals } from "@/lib/pipeline/refused";

/**
 * sha256 of a body, as the database computes it at insert (trigger raw_events_stored
 * overwrites whatever is given). Prisma's create needs a value for the NOT NULL column.
 */
export function bodySha256(body: Uint8Array): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(createHash("sha256").update(body).digest());
}

/** Makes the partitions of this month and the next monthsAhead; returns the names it made. */
export async function ensurePartitions(monthsAhead: number): Promise<string[]> {
  const { rows } = await pool().query<{ made: string }>("SELECT tally_ensure_raw_event_partitions($1) AS made", [
    monthsAhead,
  ]);
  return rows.map((r) => r.made);
}

export type Partition = { name: string; month: string | null; rows: number };

/** raw_events' partitions, oldest first; month is YYYY-MM, null for the rows from before partitioning. */
export async function listPartitions(): Promise<Partition[]> {
  const { rows } = await pool().query<{ name: string; rows: string }>(
    `SELECT c.relname AS name, greatest(c.reltuples, 0)::bigint AS rows
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'raw_events'::regclass ORDER BY c.relname`,
  );
  return rows
    .map((r) => {
      const m = /^raw_events_y(\d{4})m(\d{2})$/.exec(r.name);
      return { name: r.name, month: m ? `${m[1]}-${m[2]}` : null, rows: Number(r.rows) };
    })
    .sort((a, b) => (a.month ?? "").localeCompare(b.month ?? ""));
}

/**
 * The first instant no partition covers, counting whole months on from the
 * current one: ingest works until then. Equal to the start of this month when even
 * this month is missing (ingest is refusing with no_partition).
 */
export async function partitionedUntil(now = new Date()): Promise<Date> {
  const months = new Set((await listPartitions()).flatMap((p) => (p.month ? [p.month] : [])));
  const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  while (months.has(at.toISOString().slice(0, 7))) at.setUTCMonth(at.getUTCMonth() + 1);
  return at;
}

// A body is kept past its retention while anyone may still need to read it:
// an event not yet worked (the worker parses it; a CHECK holds this too), and the
// deliveries that are evidence of a conflict or an over-refund whose case is not
// resolved (accountants compare the bodies side by side).
const PURGE_BATCH = `
  WITH doomed AS (
    SELECT r.id FROM raw_events r
     WHERE r.tenant_id = $1 AND r.received_at >= $2 AND r.received_at < $3
       AND r.raw_body IS NOT NULL
       AND r.status NOT IN ('RECEIVED', 'CLAIMED')
       AND NOT EXISTS (
         SELECT 1 FROM claim_conflicts k
           JOIN processed_events p ON p.id = k.processed_event_id
           LEFT JOIN cases c ON c.conflict_id = k.id
          WHERE k.tenant_id = r.tenant_id
            AND (c.id IS NULL OR c.status <> 'RESOLVED')
            AND (k.raw_event_id = r.id OR p.raw_event_id = r.id
                 OR k.claimed -> 'rawEventIds' ? r.id::text))
     ORDER BY r.received_at
     LIMIT $4
     FOR UPDATE OF r SKIP LOCKED)
  UPDATE raw_events r SET raw_body = NULL, body_purged_at = now()
    FROM doomed WHERE r.id = doomed.id`;

export type PurgeResult = { tenantId: string; purged: number; kept: number; until: Date; complete: boolean };

/**
 * Removes the tenant's bodies received before now − its retention, in batches,
 * from its watermark on. Safe on several replicas at once (SKIP LOCKED; a body
 * removed twice is removed). Stops after budgetMs and goes on at the next run.
 * The watermark moves only past bodies that are gone: it stops at the first one
 * kept, so a body held for an open case is removed once the case is resolved.
 */
export async function purgeTenantBodies(
  tenantId: string,
  { now = new Date(), batch = 1000, budgetMs = 10_000 }: { now?: Date; batch?: number; budgetMs?: number } = {},
): Promise<PurgeResult> {
  const db = pool();
  const { rows: t } = await db.query<{ days: number; from: Date | null }>(
    "SELECT raw_body_retention_days AS days, raw_bodies_purged_before AS from FROM tenants WHERE id = $1",
    [tenantId],
  );
  if (!t[0]) throw new Error(`no tenant ${tenantId}`);
  const until = new Date(now.getTime() - t[0].days * 86_400_000);
  const from = t[0].from ?? new Date(0);
  const started = performance.now();
  let purged = 0;
  let complete = false;
  while (performance.now() - started < budgetMs) {
    const r = await db.query(PURGE_BATCH, [tenantId, from, until, batch]);
    purged += r.rowCount ?? 0;
    if ((r.rowCount ?? 0) < batch) {
      complete = true;
      break;
    }
  }
  let kept = 0;
  if (complete) {
    const { rows } = await db.query<{ first: Date | null; kept: string }>(
      `SELECT min(received_at) AS first, count(*) AS kept FROM raw_events
        WHERE tenant_id = $1 AND received_at >= $2 AND received_at < $3 AND raw_body IS NOT NULL`,
      [tenantId, from, until],
    );
    kept = Number(rows[0]!.kept);
    await db.query(
      `UPDATE tenants SET raw_bodies_purged_before = greatest(coalesce(raw_bodies_purged_before, '-infinity'), $2)
        WHERE id = $1`,
      [tenantId, rows[0]!.first ?? until],
    );
  }
  return { tenantId, purged, kept, until, complete };
}

export type Maintenance = {
  partitionsMade: string[];
  partitionedUntil: Date;
  purges: PurgeResult[];
  /** Refused deliveries removed after their retention (lib/pipeline/refused.ts). */
  refusalsPruned: number;
};

/** The worker's maintenance pass: partitions ahead, then every tenant's retention. */
export async function maintainRawEvents({
  monthsAhead,
  now = new Date(),
  budgetMs = 30_000,
}: {
  monthsAhead: number;
  now?: Date;
  budgetMs?: number;
}): Promise<Maintenance> {
  const partitionsMade = await ensurePartitions(monthsAhead);
  const { rows: tenants } = await pool().query<{ id: string }>("SELECT id FROM tenants ORDER BY id");
  const purges: PurgeResult[] = [];
  const started = performance.now();
  for (const { id } of tenants) {
    const left = budgetMs - (performance.now() - started);
    if (left <= 0) break;
    purges.push(await purgeTenantBodies(id, { now, budgetMs: left }));
  }
  return {
    partitionsMade,
    partitionedUntil: await partitionedUntil(now),
    purges,
    refusalsPruned: await pruneRefusals(now),
  };
}
