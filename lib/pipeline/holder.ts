// Who holds a claim. Each worker process keeps a session advisory lock, on a
// connection of its own, for as long as it lives; the claims it takes carry that
// lock's key (processed_events.claimed_by). A process that is killed loses its
// connection and the lock with it, so its claims (a whole pick-up, since a batch
// commits in one transaction) are taken over at the next poll, with a new fencing
// token, instead of waiting TALLY_STALE_CLAIM_MS for the sweep. A live process
// whose lock connection drops merely loses claims it would have committed: the
// fencing token turns its late commit away (see commitBatch).
import { randomInt } from "node:crypto";
import pg from "pg";
import { databaseUrl, Prisma } from "@/lib/platform/db";

/** The two-int advisory lock namespace of holders: pg_locks shows it as classid. */
export const HOLDER_LOCK_CLASS = 0x7a11;

let current: number | null = null;

/** The key this process's claims are taken under; null without a holder lock (in-process callers: sweep only). */
export function claimHolder(): number | null {
  return current;
}

/**
 * Holder keys whose process is gone: claimed_by on held claims with no granted
 * advisory lock under that key. Part of the take's statement (takeReleasedClaims).
 */
export const orphanedHoldersSql = Prisma.sql`
  SELECT DISTINCT claimed_by FROM processed_events
  WHERE status = 'CLAIMED' AND claimed_at IS NOT NULL AND claimed_by IS NOT NULL
  EXCEPT
  SELECT objid::bigint::int FROM pg_locks WHERE locktype = 'advisory' AND classid = ${HOLDER_LOCK_CLASS} AND objsubid = 2 AND granted`;

export type Holder = { close(): Promise<void> };

/**
 * Takes a holder lock under a fresh random key and keeps it; on losing the
 * connection, claims are taken without a holder (sweep only) until a new lock is held.
 */
export async function holdClaims(log: (event: string, fields?: Record<string, unknown>) => void): Promise<Holder> {
  let client: pg.Client | null = null;
  let closed = false;
  const connect = async (): Promise<void> => {
    if (closed) return;
    const c = new pg.Client({ connectionString: databaseUrl() });
    const lost = () => {
      if (client === c) {
        client = null;
        current = null;
      }
      c.end().catch(() => undefined);
      if (!closed) setTimeout(() => void connect(), 2000).unref();
    };
    c.on("error", lost);
    try {
      await c.connect();
      for (;;) {
        const key = randomInt(1, 2 ** 31 - 1);
        const { rows } = await c.query<{ held: boolean }>("SELECT pg_try_advisory_lock($1::int, $2::int) AS held", [
          HOLDER_LOCK_CLASS,
          key,
        ]);
        if (rows[0]?.held) {
          client = c;
          current = key;
          log("holder.locked", { holder: key });
          return;
        }
      }
    } catch (error) {
      log("holder.unavailable", { error: String(error) });
      lost();
    }
  };
  await connect();
  return {
    async close() {
      closed = true;
      current = null;
      await client?.end().catch(() => undefined);
    },
  };
}
