// The outbox dispatcher: delivers what committed transactions queued, after the
// commit, at least once. A row is leased (available_at pushed forward) while it
// is being sent, so a dispatcher that dies mid-send only delays it. A failed
// delivery is retried on TALLY_RECEIPT_RETRY_SCHEDULE; when the schedule runs out
// the receipt is DEAD: left alone, counted and listed until a person redelivers it.
import { endSpan, spanIn, SpanKind, traceparentOf } from "@/lib/platform/tracing";
import { config } from "@/lib/platform/config";
import { Prisma, prisma } from "@/lib/platform/db";
import type { ReceiptTransport } from "@/lib/pipeline/receipt-transport";

export type DispatchResult = { leased: number; sent: number; failed: number; dead: number };

/**
 * After the n-th failed attempt (n counts the first delivery too): the wait before
 * the next one, or null when the schedule has run out and the receipt is dead.
 */
export function retryDelayMs(attempts: number, schedule = config().TALLY_RECEIPT_RETRY_SCHEDULE): number | null {
  return schedule[attempts - 1] ?? null;
}

export async function dispatchOutbox(
  transport: ReceiptTransport,
  batchSize = config().TALLY_OUTBOX_BATCH,
): Promise<DispatchResult> {
  const leaseMs = config().TALLY_OUTBOX_LEASE_MS;
  const rows = await prisma.$queryRaw<
    { id: bigint; tenant_id: string; payload: Record<string, unknown>; attempts: number; trace_parent: string | null }[]
  >(Prisma.sql`
    UPDATE outbox SET available_at = now() + ${leaseMs} * interval '1 millisecond', attempts = attempts + 1
    WHERE id IN (
      SELECT id FROM outbox WHERE sent_at IS NULL AND dead_at IS NULL AND available_at <= now()
      -- Oldest available first, along outbox_unsent_available_at_id_idx (its migration says why).
      ORDER BY available_at, id LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)
    RETURNING id, tenant_id, payload, attempts, trace_parent`);
  const result: DispatchResult = { leased: rows.length, sent: 0, failed: 0, dead: 0 };
  const sent: bigint[] = [];
  const leasedAt = performance.now();
  const unsent: bigint[] = [];
  try {
    for (const row of rows) {
      // A batch of slow receivers must not outlive its lease (another dispatcher would send
      // the rest again): past half of it, what is left goes back unsent, its attempt not counted.
      if (performance.now() - leasedAt > leaseMs / 2) {
        unsent.push(row.id);
        continue;
      }
      // With tracing on, the delivery is a span in the webhook's trace, and the receipt
      // carries its traceparent so the receiver's own spans can join it.
      const span = spanIn(row.trace_parent, "receipt.deliver", {
        kind: SpanKind.CLIENT,
        attributes: {
          "tally.outbox.id": row.id.toString(),
          "tally.attempt": row.attempts,
          "tally.transport": transport.name,
        },
      });
      try {
        await transport.send({
          outboxId: row.id,
          tenantId: row.tenant_id,
          payload: row.payload,
          traceParent: traceparentOf(span),
        });
        endSpan(span);
        sent.push(row.id);
      } catch (error) {
        result.failed++;
        const message = (error instanceof Error ? error.message : String(error)).slice(0, 1000);
        endSpan(span, message);
        const delay = retryDelayMs(row.attempts);
        if (delay === null) result.dead++;
        await prisma.$executeRaw(
          delay === null
            ? Prisma.sql`UPDATE outbox SET last_error = ${message}, dead_at = now() WHERE id = ${row.id} AND sent_at IS NULL`
            : Prisma.sql`
          UPDATE outbox SET last_error = ${message}, available_at = now() + ${delay} * interval '1 millisecond'
          WHERE id = ${row.id} AND sent_at IS NULL`,
        );
      }
    }
  } finally {
    if (unsent.length)
      await prisma.$executeRaw(
        Prisma.sql`UPDATE outbox SET available_at = now(), attempts = attempts - 1 WHERE id = ANY(${unsent.map(String)}::bigint[]) AND sent_at IS NULL`,
      );
    // The batch's deliveries are recorded together: one write, not one per receipt.
    // A crash before it only means those receipts go out again, under the same ids.
    if (sent.length) {
      await prisma.$executeRaw(
        Prisma.sql`UPDATE outbox SET sent_at = now(), last_error = NULL WHERE id = ANY(${sent.map(String)}::bigint[]) AND sent_at IS NULL`,
      );
      result.sent = sent.length;
    }
  }
  return result;
}

export async function outboxBacklog(): Promise<{ pending: number; oldestSeconds: number; dead: number }> {
  const [row] = await prisma.$queryRaw<{ pending: bigint; oldest: number | null; dead: bigint }[]>(Prisma.sql`
    SELECT count(*) FILTER (WHERE dead_at IS NULL) AS pending,
           extract(epoch FROM now() - min(created_at) FILTER (WHERE dead_at IS NULL))::float8 AS oldest,
           count(*) FILTER (WHERE dead_at IS NOT NULL) AS dead
    FROM outbox WHERE sent_at IS NULL`);
  return { pending: Number(row?.pending ?? 0), oldestSeconds: row?.oldest ?? 0, dead: Number(row?.dead ?? 0) };
}
