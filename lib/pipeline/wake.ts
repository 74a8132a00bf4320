// Waking the workers after an insert, or telling them acknowledgements are slow
// (ack-pressure.ts). Best effort by design: workers also poll, so a lost
// notification costs latency, never an event.
import { pool } from "@/lib/platform/db";

export const RAW_EVENTS_CHANNEL = "tally_raw_events";
export const CLAIMS_CHANNEL = "tally_claims";
export const OUTBOX_CHANNEL = "tally_outbox";

// Under load one NOTIFY per 20 ms is plenty: a busy worker drains the queue without
// being told, and each NOTIFY is a round trip taken from the inserts.
const COALESCE_MS = 20;
const pending = new Set<string>();

/** Coalesces a burst of wake-ups into one NOTIFY per channel every few milliseconds. */
export function wake(channel: string): void {
  if (pending.has(channel)) return;
  pending.add(channel);
  setTimeout(() => {
    pending.delete(channel);
    pool()
      .query("SELECT pg_notify($1, '')", [channel])
      .catch(() => undefined);
  }, COALESCE_MS).unref?.();
}
