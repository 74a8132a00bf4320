// Refused deliveries, kept. A delivery to a known endpoint whose signature does not
// verify used to leave only a metric behind, so when the provider's settlement later
// showed a payment we never received, "signature refused" could only be guessed from
// the endpoint's secret history (lib/recon/causes.ts). Now the acknowledgement keeps a
// record of each refusal: the reason and hint, when, the body's size and SHA-256, the
// headers an adapter reads, and the body's first TALLY_REFUSED_BODY_KEEP_BYTES.
//
// The bytes are unverified: anyone who knows the URL can send them. They are never
// parsed into a movement; reconciliation only searches them for the reference of a
// movement the provider settled and we lack, to say why it is missing (a forged body
// naming a reference can at worst relabel that cause: the movement itself is fetched
// from the provider, as for any theirs-not-ours). For the same reason the record is
// bounded so a flood of unsigned requests cannot become a flood of writes: at most
// TALLY_REFUSED_KEEP_PER_MINUTE and TALLY_REFUSED_KEEP_PER_DAY per endpoint and web process (token buckets; the rest
// are only counted, in tally_webhooks_refused_unkept_total), a capped head of the body,
// and TALLY_REFUSED_RETENTION_DAYS of history (pruned by the worker's maintenance pass).
// Keeping one is a single insert beside the refusal; if it fails the refusal still
// answers as before (nothing is lost that was ever promised), and the failure is counted.
import { createHash } from "node:crypto";
import type { Provider } from "@/lib/generated/prisma/enums";
import { config } from "@/lib/platform/config";
import { pool } from "@/lib/platform/db";
import { metrics } from "@/lib/platform/metrics";

export type Refusal = {
  tenantId: string;
  provider: Provider;
  reason: string;
  hint: string | null;
  body: Buffer;
  headers: Record<string, string>;
};

type Bucket = { tokens: number; at: number };
const buckets = new Map<string, Bucket>();

/** Takes one token of a bucket holding `capacity`, refilled at `capacity` per `periodMs`. */
function take(key: string, capacity: number, periodMs: number, now: number): boolean {
  if (capacity <= 0) return false;
  let b = buckets.get(key);
  if (!b) {
    // Endpoints are known ones only (the caller found it), so the map is bounded by their number.
    b = { tokens: capacity, at: now };
    buckets.set(key, b);
  }
  b.tokens = Math.min(capacity, b.tokens + ((now - b.at) * capacity) / periodMs);
  b.at = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

/**
 * Within the endpoint's minute and day budgets. The day's bounds the storage a sustained flood
 * can take: 2,000 a day × 16 KiB × 14 days is under 450 MiB per endpoint and web process.
 */
function allowed(key: string, perMinute: number, perDay: number, now: number): boolean {
  // A minute's token spent when the day's are gone is no loss: nothing is kept either way.
  return take(`m:${key}`, perMinute, 60_000, now) && take(`d:${key}`, perDay, 86_400_000, now);
}

/** For tests: every endpoint's bucket full again. */
export function resetRefusalBuckets(): void {
  buckets.clear();
}

/** Keeps a record of a refused delivery, within the endpoint's budget. True if it was kept. */
export async function keepRefusal(r: Refusal, now = Date.now()): Promise<boolean> {
  const c = config();
  if (!allowed(`${r.tenantId}:${r.provider}`, c.TALLY_REFUSED_KEEP_PER_MINUTE, c.TALLY_REFUSED_KEEP_PER_DAY, now)) {
    metrics().webhooksRefusedUnkept.inc({ provider: r.provider, why: "budget" });
    return false;
  }
  try {
    await pool().query({
      name: "tally_ingest_refused",
      text: `INSERT INTO refused_deliveries (tenant_id, provider, reason, hint, body_bytes, body_sha256, body_head, headers)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      values: [
        r.tenantId,
        r.provider,
        r.reason,
        r.hint,
        r.body.length,
        createHash("sha256").update(r.body).digest(),
        r.body.subarray(0, c.TALLY_REFUSED_BODY_KEEP_BYTES),
        r.headers,
      ],
    });
    return true;
  } catch {
    metrics().webhooksRefusedUnkept.inc({ provider: r.provider, why: "error" });
    return false;
  }
}

/** Removes refused deliveries older than the retention. Returns how many. */
export async function pruneRefusals(now = new Date()): Promise<number> {
  const { rowCount } = await pool().query(
    `DELETE FROM refused_deliveries WHERE received_at < $1::timestamptz - $2::int * interval '1 day'`,
    [now, config().TALLY_REFUSED_RETENTION_DAYS],
  );
  return rowCount ?? 0;
}
