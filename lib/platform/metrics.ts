// Prometheus metrics for this process. One registry per process (kept on
// globalThis because Next.js may load a module more than once).
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

function create() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "tally_process_" });
  return {
    registry,
    webhooksReceived: new Counter({
      name: "tally_webhooks_received_total",
      help: "Deliveries verified and durably stored",
      labelNames: ["provider"] as const,
      registers: [registry],
    }),
    webhooksRejected: new Counter({
      name: "tally_webhooks_rejected_total",
      help: "Deliveries refused, by reason and, for failed verifications, likely cause (hint); none of them was stored",
      labelNames: ["provider", "reason", "hint"] as const,
      registers: [registry],
    }),
    ackLatency: new Histogram({
      name: "tally_webhook_ack_seconds",
      help: "Time from request to acknowledgement, successful deliveries only",
      labelNames: ["provider"] as const,
      buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  };
}

type Metrics = ReturnType<typeof create>;
const holder = globalThis as typeof globalThis & { __tallyMetrics?: Metrics };

export function metrics(): Metrics {
  holder.__tallyMetrics ??= create();
  return holder.__tallyMetrics;
}
