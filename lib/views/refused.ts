// Refused deliveries for people (lib/pipeline/refused.ts keeps them): what a provider
// sent that the acknowledgement refused, and why, so ops see a rotation one side made
// or a sender signing with the wrong secret before the day's reconciliation does.
// The bodies are unverified bytes: shown as text only (React escapes them), never
// parsed, and only their kept head.
import { pool } from "@/lib/platform/db";
import type { EventFilter } from "@/lib/views/events";

/** The events list's filter, without a status; `reference` is any text the kept body contains. */
export type RefusedFilter = Omit<EventFilter, "status">;

export type RefusedItem = {
  id: bigint;
  provider: string;
  receivedAt: Date;
  reason: string;
  hint: string | null;
  bodyBytes: number;
  bodySha256: string;
  /** The first PREVIEW_CHARS of the kept body as text (invalid UTF-8 replaced). */
  preview: string;
};

export const PREVIEW_CHARS = 400;

export type RefusedPage = { items: RefusedItem[]; nextBefore: bigint | null };

/** One page of a tenant's refused deliveries, newest first, and the cursor for the next page. */
export async function listRefused(f: RefusedFilter): Promise<RefusedPage> {
  const limit = Math.min(f.limit ?? 50, 500);
  // A filter on the body's text reads it as escape-encoded bytes, which never fails on invalid
  // UTF-8 and keeps ASCII (every provider's ids) as it is.
  const { rows } = await pool().query<{
    id: string;
    provider: string;
    received_at: Date;
    reason: string;
    hint: string | null;
    body_bytes: number;
    sha: string;
    head: Buffer;
  }>(
    `SELECT id::text, provider::text, received_at, reason, hint, body_bytes, encode(body_sha256, 'hex') AS sha,
            substring(body_head FROM 1 FOR $8) AS head
     FROM refused_deliveries
     WHERE tenant_id = $1
       AND ($2::text IS NULL OR provider::text = $2)
       AND ($3::text IS NULL OR strpos(encode(body_head, 'escape'), $3) > 0)
       AND ($4::timestamptz IS NULL OR received_at >= $4)
       AND ($5::timestamptz IS NULL OR received_at < $5)
       AND ($6::bigint IS NULL OR id < $6)
     ORDER BY id DESC LIMIT $7`,
    [
      f.tenantId,
      f.provider ?? null,
      f.reference || null,
      f.from ?? null,
      f.to ?? null,
      f.beforeId?.toString() ?? null,
      limit + 1,
      PREVIEW_CHARS * 4,
    ],
  );
  const items = rows.slice(0, limit).map(
    (r): RefusedItem => ({
      id: BigInt(r.id),
      provider: r.provider,
      receivedAt: r.received_at,
      reason: r.reason,
      hint: r.hint,
      bodyBytes: r.body_bytes,
      bodySha256: r.sha,
      preview: [...new TextDecoder("utf-8").decode(r.head)].slice(0, PREVIEW_CHARS).join(""),
    }),
  );
  return { items, nextBefore: rows.length > limit ? items[items.length - 1]!.id : null };
}

export type RefusalCount = { provider: string; refused: number; reason: string; hint: string | null };

/** Refused deliveries per provider since a time, with the commonest reason and hint (the alert's figure). */
export async function refusalsByProvider(tenantId: string, since: Date): Promise<RefusalCount[]> {
  const { rows } = await pool().query<{ provider: string; refused: number; reason: string; hint: string | null }>(
    `SELECT provider::text, count(*)::int AS refused, mode() WITHIN GROUP (ORDER BY reason) AS reason,
            mode() WITHIN GROUP (ORDER BY hint) AS hint
     FROM refused_deliveries WHERE tenant_id = $1 AND received_at >= $2 GROUP BY provider ORDER BY provider`,
    [tenantId, since],
  );
  return rows;
}
