// Fault hooks for crash tests: the worker announces where it stopped and waits
// there, still holding its transaction open, until the test SIGKILLs it.
import { config } from "@/lib/platform/config";

export type FaultPoint = "after-ledger-write" | "after-claim";

export async function pauseIfFaultAt(point: FaultPoint): Promise<void> {
  if (config().TALLY_FAULT_PAUSE_AT !== point) return;
  console.log(JSON.stringify({ event: "fault.paused", at: point, pid: process.pid }));
  await new Promise(() => undefined);
}
