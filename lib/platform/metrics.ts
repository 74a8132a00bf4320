// Prometheus metrics for this process. One registry per process (kept on
// globalThis because Next.js may load a module more than once).
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { config } from "@/lib/platform/config";
import { cumulativeBuckets, HistogramWindows } from "@/lib/platform/histogram-windows";

const DAY_MS = 86_400_000;

function create() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "tally_process_" });
  const m = {
    registry,
    webhooksReceived: new Counter({
      name: "tally_webhooks_received_total",
      help: "Deliveries verified and durably stored",
      labelNames: ["provider"] as const,
      registers: [registry],
    }),
    webhooksRejected: new Counter({
      name: "tally_webhooks_rejected_total",
      help: "Deliveries refused, by reason and, for failed verifications, likely cause (hint); none of them was stored as an event",
      labelNames: ["provider", "reason", "hint"] as const,
      registers: [registry],
    }),
    webhooksRefusedUnkept: new Counter({
      name: "tally_webhooks_refused_unkept_total",
      help: "Refused deliveries to a known endpoint not recorded in refused_deliveries: over the endpoint's budget, or the insert failed",
      labelNames: ["provider", "why"] as const,
      registers: [registry],
    }),
    ackLatency: new Histogram({
      name: "tally_webhook_ack_seconds",
      help: "Time from request to acknowledgement, successful deliveries only",
      labelNames: ["provider"] as const,
      buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    /** Snapshots of ackLatency for rolling windows (the overview's "last 15 min" and "last 24 h"). */
    ackWindows: sampledWindows(),
  };
  startSampling(m.ackWindows, m.ackLatency);
  return m;
}

// A snapshot every 1/15 of the short window (a minute by default) puts that
// window's start within 7% of its nominal length; the ring is capped so a short
// test window cannot grow it without bound (24 h at one a minute is 1,441).
function sampledWindows(): HistogramWindows & { everyMs: number } {
  const everyMs = Math.min(60_000, Math.max(1000, Math.floor(config().TALLY_ACK_RECENT_WINDOW_MS / 15)));
  return Object.assign(new HistogramWindows({ everyMs, keep: Math.min(5000, Math.ceil(DAY_MS / everyMs) + 2) }), {
    everyMs,
  });
}

function startSampling(windows: HistogramWindows & { everyMs: number }, histogram: Histogram<"provider">): void {
  // The histogram is empty now: this first snapshot is the honest start of any window.
  windows.record(Date.now(), []);
  const timer = setInterval(() => {
    void cumulativeBuckets(histogram).then((b) => windows.record(Date.now(), b));
  }, windows.everyMs);
  timer.unref();
}

type Metrics = ReturnType<typeof create>;
const holder = globalThis as typeof globalThis & { __tallyMetrics?: Metrics };

export function metrics(): Metrics {
  holder.__tallyMetrics ??= create();
  return holder.__tallyMetrics;
}
