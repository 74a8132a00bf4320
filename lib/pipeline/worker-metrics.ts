// The worker's metrics, in the same per-process registry as the web app's.
import { Counter, Gauge, Histogram } from "prom-client";
import { metrics } from "@/lib/platform/metrics";
import { outboxBacklog } from "@/lib/pipeline/outbox";

function create() {
  const registers = [metrics().registry];
  return {
    processed: new Counter({
      name: "tally_worker_posted_total",
      help: "Movements posted to the ledger (claims committed DONE)",
      labelNames: ["provider"] as const,
      registers,
    }),
    duplicates: new Counter({
      name: "tally_worker_duplicates_total",
      help: "Deliveries whose every movement was already claimed",
      labelNames: ["provider"] as const,
      registers,
    }),
    ignored: new Counter({
      name: "tally_worker_ignored_total",
      help: "Events that move no money",
      labelNames: ["provider"] as const,
      registers,
    }),
    failures: new Counter({
      name: "tally_worker_failures_total",
      help: "Events that failed to parse, and claims given up on",
      labelNames: ["stage"] as const,
      registers,
    }),
    ackYieldSeconds: new Counter({
      name: "tally_worker_ack_yield_seconds_total",
      help: "Time the worker paused between pick-ups because the web process reported its acknowledgements over budget",
      registers,
    }),
    fenced: new Counter({
      name: "tally_worker_fenced_total",
      help: "Commits refused because the claim's fencing token had moved on",
      registers,
    }),
    deferred: new Counter({
      name: "tally_worker_deferred_total",
      help: "Claims released for a later retry",
      registers,
    }),
    sweeps: new Counter({
      name: "tally_sweeps_total",
      help: "Sweep passes run (this replica held the sweep lock)",
      registers,
    }),
    reclaimed: new Counter({
      name: "tally_sweep_released_total",
      help: "Stale claims released by the sweep",
      registers,
    }),
    receiptsSent: new Counter({ name: "tally_outbox_sent_total", help: "Receipts delivered", registers }),
    receiptFailures: new Counter({
      name: "tally_outbox_failures_total",
      help: "Receipt deliveries that failed (retried on the schedule, or dead when it ran out)",
      registers,
    }),
    receiptsDead: new Counter({
      name: "tally_outbox_dead_total",
      help: "Receipts whose retry schedule ran out (dead letters, listed for redelivery)",
      registers,
    }),
    deadBacklog: new Gauge({
      name: "tally_outbox_dead",
      help: "Dead receipts waiting for a person to redeliver them",
      registers,
      async collect() {
        this.set((await outboxBacklog()).dead);
      },
    }),
    endToEnd: new Histogram({
      name: "tally_receipt_to_done_seconds",
      help: "From the delivery being stored to its movement committed DONE",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    }),
    partitionedUntil: new Gauge({
      name: "tally_raw_events_partitioned_until_seconds",
      help: "Unix time until which raw_events has partitions (set by the maintenance pass); ingest refuses after it",
      registers,
    }),
    bodiesPurged: new Counter({
      name: "tally_raw_bodies_purged_total",
      help: "Raw bodies removed after their tenant's retention",
      registers,
    }),
    outboxBacklog: new Gauge({
      name: "tally_outbox_backlog",
      help: "Receipts not yet delivered",
      registers,
      async collect() {
        this.set((await outboxBacklog()).pending);
      },
    }),
    outboxAge: new Gauge({
      name: "tally_outbox_oldest_seconds",
      help: "Age of the oldest undelivered receipt",
      registers,
      async collect() {
        this.set((await outboxBacklog()).oldestSeconds);
      },
    }),
  };
}

type WorkerMetrics = ReturnType<typeof create>;
const holder = globalThis as typeof globalThis & { __tallyWorkerMetrics?: WorkerMetrics };

export function workerMetrics(): WorkerMetrics {
  holder.__tallyWorkerMetrics ??= create();
  return holder.__tallyWorkerMetrics;
}
