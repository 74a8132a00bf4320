// Runs the worker's loops in-process until nothing is left to do.
import { prisma } from "@/lib/platform/db";
import { dispatchOutbox } from "@/lib/pipeline/outbox";
import type { ReceiptTransport } from "@/lib/pipeline/receipt-transport";
import { processOnce } from "@/lib/pipeline/worker";

export const silent = () => undefined;

/** Collects receipts in memory, counting every delivery (repeats included). */
export function memoryTransport(): ReceiptTransport & {
  delivered: { outboxId: bigint; payload: Record<string, unknown> }[];
} {
  const delivered: { outboxId: bigint; payload: Record<string, unknown> }[] = [];
  return {
    name: "memory",
    delivered,
    async send(r) {
      delivered.push({ outboxId: r.outboxId, payload: r.payload });
    },
  };
}

export async function drain(transport: ReceiptTransport = memoryTransport()): Promise<void> {
  while ((await processOnce(silent)) > 0);
  while ((await dispatchOutbox(transport)).leased > 0);
}

/**
 * drain(), and claims deferred with a back-off (a refund that arrived before its
 * payment) are retried at once instead of after their back-off: time, fast-forwarded.
 */
export async function drainAll(transport: ReceiptTransport = memoryTransport()): Promise<void> {
  for (let round = 0; round < 20; round++) {
    await drain(transport);
    const waiting = await prisma.processedEvent.updateMany({
      where: { status: "CLAIMED", claimedAt: null },
      data: { retryAt: new Date() },
    });
    if (waiting.count === 0) return;
  }
  throw new Error("claims still deferred after 20 rounds");
}
