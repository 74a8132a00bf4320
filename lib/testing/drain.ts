// Runs the worker's loops in-process until nothing is left to do.
import { dispatchOutbox } from "@/lib/outbox";
import type { ReceiptTransport } from "@/lib/receipt-transport";
import { processOnce } from "@/lib/worker";

export const silent = () => undefined;

/** Collects receipts in memory, counting every delivery (repeats included). */
export function memoryTransport(): ReceiptTransport & { delivered: { outboxId: bigint; payload: Record<string, unknown> }[] } {
  const delivered: { outboxId: bigint; payload: Record<string, unknown> }[] = [];
  return { name: "memory", delivered, async send(r) { delivered.push({ outboxId: r.outboxId, payload: r.payload }); } };
}

export async function drain(transport: ReceiptTransport = memoryTransport()): Promise<void> {
  while ((await processOnce(silent)) > 0);
  while ((await dispatchOutbox(transport)).leased > 0);
}
