// Step 2 and 3 of the protocol: parse what arrived and claim each money movement's
// idempotency key before doing anything with it. A claim that is not won is
// someone else's: this delivery becomes a DUPLICATE and does no work at all.
//
//   RECEIVED raw event ──parse──► IGNORED | FAILED
//                        └─claim─► CLAIMED (won ≥ 1 key) ──commit──► DONE
//                                  DONE      (a plain movement claimed and posted in one transaction: commitInPickUp)
//                                  DUPLICATE (every key already claimed, with the same money)
//                                  CONFLICT  (a key already claimed with other money: never posted, a case)
import { config } from "@/lib/platform/config";
import { isDatabaseUnavailable, Prisma, prisma, type Tx } from "@/lib/platform/db";
import type { EventSource, Provider } from "@/lib/generated/prisma/enums";
import { claimHolder, orphanedHoldersSql } from "@/lib/pipeline/holder";
import { adapterFor } from "@/lib/providers";
import type { Movement, ParseResult } from "@/lib/providers/types";
import { parseSettlementMovement } from "@/lib/recon/settlement-movement";

/** tenant:provider:provider_reference: the provider's own reference, scoped by tenant. Never our id, a timestamp or a payload hash. */
export function idempotencyKey(tenantId: string, provider: Provider, reference: string): string {
  return `${tenantId}:${provider}:${reference}`;
}

/** A claim this worker owns, with the fencing token it must present to commit. */
export type OwnedClaim = {
  claimId: bigint;
  version: number;
  tenantId: string;
  provider: Provider;
  reference: string;
  rawEventId: bigint;
  /** Present when the claim was made from a fresh parse; reparsed otherwise. */
  movement?: Movement;
  /** When the first delivery carrying the movement arrived (for end-to-end latency). */
  receivedAt?: Date;
  /** How many movements the raw event carries, when known: with one, committing needs no lock on the event. */
  movementsInEvent?: number;
  /** The trace context its commit continues (the pick-up's span for this event), when tracing. */
  traceParent?: string | null;
  /** Claimed as DONE, in a pick-up that posts it in the same transaction (CommitInPickUp). */
  claimedDone?: boolean;
};

export type PickUpResult = {
  picked: number;
  claims: OwnedClaim[];
  duplicates: number;
  conflicts: number;
  ignored: number;
  failed: number;
  /** Claims the pick-up committed itself, in its own transaction (see pickUpReceived's `commit`). */
  posted: { claim: OwnedClaim; postingId: bigint; outboxId: bigint; woken: number }[];
  /** Each event taken, its verdict and the trace context it was acknowledged in (for its pick-up span). */
  events: { rawEventId: bigint; provider: Provider; status: RawOutcome["status"]; traceParent: string | null }[];
};

type RawRow = {
  id: bigint;
  tenant_id: string;
  provider: Provider;
  source: EventSource;
  raw_body: Uint8Array;
  received_at: Date;
  trace_parent: string | null;
};
/** done: claimed as DONE at once, to be posted in the same transaction (CommitInPickUp). */
type Wanted = { key: string; raw: RawRow; movement: Movement; done: boolean };

const TX_OPTIONS = { maxWait: 10_000, timeout: 60_000 } as const;

/** Parses a stored body; a parser that throws is a bug, but must fail one event, not the batch. */
export function parseRaw(provider: Provider, rawBody: Uint8Array, source?: EventSource): ParseResult {
  // Tally's own body for a movement only the settlement reports; the source is ours, never the sender's.
  if (source === "SETTLEMENT") return parseSettlementMovement(Buffer.from(rawBody));
  const adapter = adapterFor(provider);
  if (!adapter) return { kind: "failed", error: `no adapter for provider ${provider}` };
  try {
    return adapter.parse(Buffer.from(rawBody));
  } catch (error) {
    return { kind: "failed", error: `parser crashed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * The pick-up's two SELECTs, exported so bench:scale explains the statements the
 * worker runs rather than copies. raw_event_queue holds exactly the RECEIVED events
 * (triggers keep it); recording an outcome takes each one off it, in the same
 * transaction. First the queue's ids, then their rows by `id = ANY(ids)`: with the
 * ids known when the statement is planned, PostgreSQL prunes raw_events to the
 * months they are in. As one statement joining the queue (LATERAL, one probe per
 * id), every pick-up planned and opened every monthly partition: at 10M rows over
 * 9 partitions the pick-up took 1.21x its time on an empty database (5), and it
 * would grow by a partition a month for as long as rows are kept.
 */
export function queuedSql(batchSize: number): Prisma.Sql {
  return Prisma.sql`SELECT raw_event_id AS id FROM raw_event_queue ORDER BY raw_event_id LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`;
}

export function pickedRowsSql(ids: bigint[]): Prisma.Sql {
  return Prisma.sql`
    SELECT id, tenant_id, provider, source, raw_body, received_at, trace_parent FROM raw_events
    WHERE id = ANY(${ids.map(String)}::bigint[])
    ORDER BY id FOR UPDATE SKIP LOCKED`;
}

/**
 * Posting inside the pick-up's transaction (lib/pipeline/commit.ts, commitInPickUp):
 * which movements can be, so their claims are inserted DONE; and the posting of the
 * claims so won, which returns what it posted by claim id and turns any it could not
 * post back to CLAIMED, for the commit step.
 */
export type CommitInPickUp = {
  postable: (provider: Provider, movement: Movement, movementsInEvent: number) => boolean;
  commit: (
    tx: Tx,
    claims: OwnedClaim[],
  ) => Promise<Map<bigint, { postingId: bigint; outboxId: bigint; woken: number }>>;
};

/**
 * Takes a batch of RECEIVED events from the queue (SKIP LOCKED: replicas never
 * take the same row), parses them and claims their movements, in one short transaction.
 * With `commit`, the claims it can post there are posted in the same transaction, and
 * their raw events go from RECEIVED to DONE in one write.
 */
export async function pickUpReceived(
  batchSize = config().TALLY_WORKER_BATCH,
  commit?: CommitInPickUp,
): Promise<PickUpResult> {
  if (!commit) return pickUpOnce(batchSize);
  try {
    return await pickUpOnce(batchSize, commit);
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw error;
    // Refused as a whole (at COMMIT, past commitInPickUp's savepoint): nothing of it was
    // written. The same events again, every claim through the commit step, which finds
    // the member at fault instead of refusing the whole pick-up again and again.
    return pickUpOnce(batchSize);
  }
}

async function pickUpOnce(batchSize: number, commit?: CommitInPickUp): Promise<PickUpResult> {
  return prisma.$transaction(async (tx) => {
    const queued = await tx.$queryRaw<{ id: bigint }[]>(queuedSql(batchSize));
    const rows = queued.length > 0 ? await tx.$queryRaw<RawRow[]>(pickedRowsSql(queued.map((q) => q.id))) : [];
    const result: PickUpResult = {
      picked: rows.length,
      claims: [],
      duplicates: 0,
      conflicts: 0,
      ignored: 0,
      failed: 0,
      posted: [],
      events: [],
    };
    const outcomes: RawOutcome[] = [];
    const wanted: Wanted[] = [];
    const eventTypes = new Map<bigint, string>();

    for (const raw of rows) {
      const parsed = parseRaw(raw.provider, raw.raw_body, raw.source);
      if (parsed.kind === "failed") {
        result.failed++;
        outcomes.push({
          id: raw.id,
          status: "FAILED",
          eventType: null,
          note: null,
          error: parsed.error,
          duplicateOf: null,
          references: [],
        });
      } else if (parsed.kind === "ignored") {
        result.ignored++;
        outcomes.push({
          id: raw.id,
          status: "IGNORED",
          eventType: parsed.eventType,
          note: parsed.reason,
          error: null,
          duplicateOf: null,
          references: [],
        });
      } else {
        eventTypes.set(raw.id, parsed.eventType);
        for (const movement of parsed.movements) {
          let key = idempotencyKey(raw.tenant_id, raw.provider, movement.reference);
          // Fault hook for the replay's self-test: without the claim, every delivery is "new".
          if (config().TALLY_FAULT_DISABLE_CLAIM) key = `${key}#${raw.id}`;
          const done = commit?.postable(raw.provider, movement, parsed.movements.length) ?? false;
          wanted.push({ key, raw, movement, done });
        }
      }
    }

    if (wanted.length > 0) {
      const won = await claimKeys(tx, wanted);
      const lost = wanted.filter((w) => !won.has(`${w.key}\u0000${w.raw.id}`));
      const earlier = await firstCarriers(
        tx,
        lost.map((w) => w.key),
      );
      // A lost key whose claim holds other money is a conflict, not a duplicate.
      const conflicting = lost.filter((w) => {
        const c = earlier.get(w.key);
        return c !== undefined && c.amount !== null && canonical(c) !== canonical(w.movement);
      });
      const conflictOf = await recordConflicts(
        tx,
        conflicting.map((w) => ({
          tenantId: w.raw.tenant_id,
          provider: w.raw.provider,
          rawEventId: w.raw.id,
          movement: w.movement,
          claim: earlier.get(w.key)!,
        })),
      );
      const mineOf = new Map<bigint, Wanted[]>();
      for (const w of wanted) mineOf.set(w.raw.id, [...(mineOf.get(w.raw.id) ?? []), w]);
      const ownedOf = new Map<bigint, OwnedClaim[]>();
      for (const raw of rows) {
        const mine = mineOf.get(raw.id) ?? [];
        if (mine.length === 0) continue;
        const owned = mine.flatMap((w) => {
          const claim = won.get(`${w.key}\u0000${raw.id}`);
          return claim
            ? [
                {
                  ...claim,
                  tenantId: raw.tenant_id,
                  provider: raw.provider,
                  reference: w.movement.reference,
                  rawEventId: raw.id,
                  movement: w.movement,
                  receivedAt: raw.received_at,
                  movementsInEvent: mine.length,
                  traceParent: raw.trace_parent,
                  claimedDone: w.done,
                },
              ]
            : [];
        });
        ownedOf.set(raw.id, owned);
      }
      const posted = commit ? await commit.commit(tx, [...ownedOf.values()].flat()) : new Map();
      for (const raw of rows) {
        const mine = mineOf.get(raw.id) ?? [];
        if (mine.length === 0) continue;
        const owned = ownedOf.get(raw.id)!;
        const eventType = eventTypes.get(raw.id) ?? null;
        const references = mine.map((w) => w.movement.reference);
        const conflict = mine.map((w) => conflictOf.get(`${w.key}\u0000${raw.id}`)).find((c) => c !== undefined);
        const done = owned.length > 0 && owned.every((c) => posted.has(c.claimId));
        if (done) {
          for (const claim of owned) result.posted.push({ claim, ...posted.get(claim.claimId)! });
          outcomes.push({
            id: raw.id,
            status: "DONE",
            eventType,
            note: null,
            error: null,
            duplicateOf: null,
            references,
          });
        } else if (owned.length > 0) {
          for (const claim of owned)
            if (posted.has(claim.claimId)) result.posted.push({ claim, ...posted.get(claim.claimId)! });
            else result.claims.push(claim);
          outcomes.push({
            id: raw.id,
            status: "CLAIMED",
            eventType,
            note: null,
            error: null,
            duplicateOf: null,
            references,
          });
        } else if (conflict) {
          result.conflicts++;
          outcomes.push({
            id: raw.id,
            status: "CONFLICT",
            eventType,
            note: null,
            error: conflict.message,
            duplicateOf: null,
            references,
          });
        } else {
          result.duplicates++;
          outcomes.push({
            id: raw.id,
            status: "DUPLICATE",
            eventType,
            note: null,
            error: null,
            duplicateOf: earlier.get(mine[0]!.key)?.rawEventId ?? null,
            references,
          });
        }
      }
    }
    if (outcomes.length > 0) await recordOutcomes(tx, outcomes);
    const byId = new Map(rows.map((r) => [r.id, r]));
    result.events = outcomes.map((o) => ({
      rawEventId: o.id,
      provider: byId.get(o.id)!.provider,
      status: o.status,
      traceParent: byId.get(o.id)!.trace_parent,
    }));
    return result;
  }, TX_OPTIONS);
}

type RawOutcome = {
  id: bigint;
  status: "CLAIMED" | "DONE" | "DUPLICATE" | "CONFLICT" | "IGNORED" | "FAILED";
  eventType: string | null;
  note: string | null;
  error: string | null;
  duplicateOf: bigint | null;
  references: string[];
};

/** The batch's verdicts in one statement rather than one round trip per event. */
async function recordOutcomes(tx: Tx, outcomes: RawOutcome[]): Promise<void> {
  await tx.$executeRaw(Prisma.sql`
    UPDATE raw_events r SET
      status = v.status::"RawEventStatus",
      event_type = coalesce(v.event_type, r.event_type),
      note = v.note,
      last_error = v.error,
      duplicate_of_id = v.duplicate_of,
      movement_references = ARRAY(SELECT jsonb_array_elements_text(v.refs::jsonb)),
      attempts = r.attempts + 1,
      processed_at = CASE WHEN v.status = 'CLAIMED' THEN r.processed_at ELSE now() END
    FROM unnest(
      ${outcomes.map((o) => o.id.toString())}::bigint[],
      ${outcomes.map((o) => o.status)}::text[],
      ${outcomes.map((o) => o.eventType)}::text[],
      ${outcomes.map((o) => o.note)}::text[],
      ${outcomes.map((o) => o.error)}::text[],
      ${outcomes.map((o) => (o.duplicateOf === null ? null : o.duplicateOf.toString()))}::bigint[],
      ${outcomes.map((o) => JSON.stringify(o.references))}::text[]) AS v(id, status, event_type, note, error, duplicate_of, refs)
    -- The ids again as an array: the join alone cannot prune raw_events to its months.
    WHERE r.id = v.id AND r.id = ANY(${outcomes.map((o) => o.id.toString())}::bigint[])`);
}

/**
 * INSERT … ON CONFLICT DO NOTHING RETURNING: only the first claimant of a key
 * gets a row back. Keys go in sorted order so two batches claiming overlapping
 * keys wait on each other instead of deadlocking; the unique index underneath
 * is the backstop for any race this misses.
 */
async function claimKeys(tx: Tx, wanted: Wanted[]): Promise<Map<string, { claimId: bigint; version: number }>> {
  const sorted = [...wanted].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : Number(a.raw.id - b.raw.id)));
  const rows = await tx.$queryRaw<
    { id: bigint; idempotency_key: string; raw_event_id: bigint; claim_version: number }[]
  >(Prisma.sql`
    INSERT INTO processed_events (idempotency_key, tenant_id, provider, provider_reference, raw_event_id, movement_kind, account, amount, currency, payment_reference, status, done_at, claimed_by)
    SELECT k, t, p, r, e, mk, a, am, c, pr, CASE WHEN d THEN 'DONE' ELSE 'CLAIMED' END::"ClaimStatus", CASE WHEN d THEN now() END, ${claimHolder()}::int FROM unnest(
      ${sorted.map((w) => w.key)}::text[],
      ${sorted.map((w) => w.raw.tenant_id)}::uuid[],
      ${sorted.map((w) => w.raw.provider)}::"Provider"[],
      ${sorted.map((w) => w.movement.reference)}::text[],
      ${sorted.map((w) => w.raw.id.toString())}::bigint[],
      ${sorted.map((w) => w.movement.kind)}::"PostingKind"[],
      ${sorted.map((w) => w.movement.account)}::text[],
      ${sorted.map((w) => w.movement.amount.toString())}::bigint[],
      ${sorted.map((w) => w.movement.currency)}::text[],
      ${sorted.map((w) => w.movement.paymentReference ?? null)}::text[],
      ${sorted.map((w) => w.done)}::boolean[]) AS u(k, t, p, r, e, mk, a, am, c, pr, d)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id, idempotency_key, raw_event_id, claim_version`);
  return new Map(
    rows.map((r) => [`${r.idempotency_key}\u0000${r.raw_event_id}`, { claimId: r.id, version: r.claim_version }]),
  );
}

/** What a claim holds: the movement it was won with (amount null on claims older than these columns). */
export type ClaimedMovement = {
  claimId: bigint;
  rawEventId: bigint;
  kind: string | null;
  account: string | null;
  amount: bigint | null;
  currency: string | null;
};

/** For keys claimed before: which raw event carried them first, and the money it claimed. */
async function firstCarriers(tx: Tx, keys: string[]): Promise<Map<string, ClaimedMovement>> {
  if (keys.length === 0) return new Map();
  const rows = await tx.$queryRaw<
    {
      id: bigint;
      idempotency_key: string;
      raw_event_id: bigint;
      movement_kind: string | null;
      account: string | null;
      amount: bigint | null;
      currency: string | null;
    }[]
  >(Prisma.sql`
    SELECT id, idempotency_key, raw_event_id, movement_kind::text, account, amount, trim(currency) AS currency FROM processed_events WHERE idempotency_key = ANY(${keys}::text[])`);
  return new Map(
    rows.map((r) => [
      r.idempotency_key,
      {
        claimId: r.id,
        rawEventId: r.raw_event_id,
        kind: r.movement_kind,
        account: r.account,
        amount: r.amount,
        currency: r.currency,
      },
    ]),
  );
}

/**
 * A movement's money, canonical: kind, account, amount, currency. Two deliveries
 * are the same movement when these agree, whatever their JSON formatting, field
 * order, event id or timestamps; when they do not, retrying cannot say which is right.
 */
export function canonical(m: {
  kind: string | null;
  account: string | null;
  amount: bigint | null;
  currency: string | null;
}): string {
  return JSON.stringify([m.kind, m.account, m.amount?.toString() ?? null, m.currency]);
}

const moneyOf = (m: {
  kind: string | null;
  account: string | null;
  amount: bigint | null;
  currency: string | null;
}) => ({ kind: m.kind, account: m.account, amount: m.amount?.toString() ?? null, currency: m.currency });

type Conflicting = {
  tenantId: string;
  provider: Provider;
  rawEventId: bigint;
  movement: Movement;
  claim: ClaimedMovement;
};

/**
 * Records each conflicting delivery once (the same conflicting body delivered again
 * finds the same row: unique on the claim and the delivered money) and opens a case
 * for each new one, in the pick-up's transaction. Returns, per key and raw event,
 * the message and the raw event that first carried this conflict.
 */
async function recordConflicts(
  tx: Tx,
  conflicts: Conflicting[],
): Promise<Map<string, { message: string; firstRawEventId: bigint }>> {
  const out = new Map<string, { message: string; firstRawEventId: bigint }>();
  for (const c of conflicts) {
    const deliveredKey = canonical(c.movement);
    const claimed = moneyOf(c.claim);
    const delivered = moneyOf(c.movement);
    const [row] = await tx.$queryRaw<{ id: bigint; raw_event_id: bigint; inserted: boolean }[]>(Prisma.sql`
      WITH ins AS (
        INSERT INTO claim_conflicts (tenant_id, kind, provider, reference, processed_event_id, raw_event_id, claimed, delivered, delivered_key)
        VALUES (${c.tenantId}::uuid, 'DIFFERENT_RETRY', ${c.provider}::"Provider", ${c.movement.reference}, ${c.claim.claimId}, ${c.rawEventId}, ${JSON.stringify(claimed)}::jsonb, ${JSON.stringify(delivered)}::jsonb, ${deliveredKey})
        ON CONFLICT (processed_event_id, delivered_key) DO NOTHING
        RETURNING id, raw_event_id),
      opened AS (INSERT INTO cases (tenant_id, conflict_id, kind) SELECT ${c.tenantId}::uuid, id, 'CONFLICT' FROM ins)
      SELECT id, raw_event_id, true AS inserted FROM ins
      UNION ALL
      SELECT id, raw_event_id, false FROM claim_conflicts WHERE processed_event_id = ${c.claim.claimId} AND delivered_key = ${deliveredKey} AND NOT EXISTS (SELECT 1 FROM ins)`);
    const differs = (["kind", "account", "amount", "currency"] as const)
      .filter((f) => claimed[f] !== delivered[f])
      .map((f) => `${f} ${claimed[f] ?? "(none)"} → ${delivered[f] ?? "(none)"}`);
    const message = `conflicts with the claim on ${c.movement.reference} (raw event ${c.claim.rawEventId}): ${differs.join(", ")}; not posted, held for accountants`;
    // A concurrent pick-up inserting the same conflict: the unique index makes one of them wait, then see the row.
    out.set(`${idempotencyKey(c.tenantId, c.provider, c.movement.reference)}\u0000${c.rawEventId}`, {
      message,
      firstRawEventId: row?.raw_event_id ?? c.claim.rawEventId,
    });
  }
  return out;
}

/**
 * Takes claims that were released (by the sweep, an operator, or a deferral
 * whose back-off has passed), and claims whose holder is gone (its worker was
 * killed: see holder.ts). Taking bumps the fencing token, so whoever held the
 * claim before can no longer commit.
 */
export async function takeReleasedClaims(
  batchSize = config().TALLY_WORKER_BATCH,
): Promise<(OwnedClaim & { takenOver: boolean })[]> {
  const holder = claimHolder();
  const rows = await prisma.$queryRaw<
    {
      id: bigint;
      claim_version: number;
      tenant_id: string;
      provider: Provider;
      provider_reference: string;
      raw_event_id: bigint;
      taken_over: boolean;
    }[]
  >(Prisma.sql`
    WITH orphaned AS (${orphanedHoldersSql}),
    taken AS (
      SELECT id, claimed_at IS NOT NULL AS taken_over FROM processed_events
      WHERE status = 'CLAIMED'
        AND ((claimed_at IS NULL AND (retry_at IS NULL OR retry_at <= now()))
          OR (claimed_at IS NOT NULL AND claimed_by IN (SELECT claimed_by FROM orphaned)))
      ORDER BY id LIMIT ${batchSize}
      FOR UPDATE SKIP LOCKED)
    UPDATE processed_events p SET claimed_at = now(), claimed_by = ${holder}::int, claim_version = p.claim_version + 1, attempts = p.attempts + 1
    FROM taken WHERE p.id = taken.id
    RETURNING p.id, p.claim_version, p.tenant_id, p.provider, p.provider_reference, p.raw_event_id, taken.taken_over`);
  return rows.map((r) => ({
    claimId: r.id,
    version: r.claim_version,
    tenantId: r.tenant_id,
    provider: r.provider,
    reference: r.provider_reference,
    rawEventId: r.raw_event_id,
    takenOver: r.taken_over,
  }));
}
