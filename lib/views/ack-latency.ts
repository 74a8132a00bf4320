// The acknowledgement latency people see on the overview: the 99th percentile of
// this web process's tally_webhook_ack_seconds histogram over rolling windows
// (the last TALLY_ACK_RECENT_WINDOW_MS, 15 minutes by default, and the last
// 24 hours), estimated from its buckets the way Prometheus' histogram_quantile
// does (linear within a bucket), and judged against TALLY_ACK_SLO_MS. A
// since-start figure is not shown: a start-up burst (the demo's first day, a
// deploy's cold caches) would colour it for the life of the process.
import { config } from "@/lib/platform/config";
import { cumulativeBuckets, type Bucket } from "@/lib/platform/histogram-windows";
import { metrics } from "@/lib/platform/metrics";

export type { Bucket };

export type QuantileEstimate =
  | { kind: "none" }
  /** Within the buckets: interpolated between the bucket's bounds. */
  | { kind: "estimate"; seconds: number; bucket: { from: number; to: number } }
  /** Beyond the largest finite bucket: only "more than" is known. */
  | { kind: "above"; seconds: number };

export function estimateQuantile(buckets: Bucket[], q: number): QuantileEstimate {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total === 0) return { kind: "none" };
  const rank = q * total;
  for (let i = 0; i < sorted.length; i++) {
    const b = sorted[i]!;
    if (b.count < rank) continue;
    if (!Number.isFinite(b.le)) return { kind: "above", seconds: sorted[i - 1]?.le ?? 0 };
    const lower = i === 0 ? 0 : sorted[i - 1]!.le;
    const below = i === 0 ? 0 : sorted[i - 1]!.count;
    const inBucket = b.count - below;
    const seconds = inBucket === 0 ? b.le : lower + ((b.le - lower) * (rank - below)) / inBucket;
    return { kind: "estimate", seconds, bucket: { from: lower, to: b.le } };
  }
  return { kind: "none" };
}

/** Within the objective, above it, or nothing to judge. "above" (past the last bucket) is always over. */
export type SloTone = "good" | "bad" | "none";

export function sloTone(q: QuantileEstimate, sloSeconds: number): SloTone {
  if (q.kind === "none") return "none";
  if (q.kind === "above") return "bad";
  return q.seconds <= sloSeconds ? "good" : "bad";
}

export type AckWindow = {
  /** The nominal length ("last 15 minutes"). */
  windowMs: number;
  /** What the figure actually covers: from the snapshot it is measured against (the process start when younger than the window). */
  from: Date;
  p99: QuantileEstimate;
  deliveries: number;
  tone: SloTone;
};

export type AckLatency = {
  sloSeconds: number;
  recent: AckWindow;
  day: AckWindow;
  /** The histogram lives in this process's memory: it starts empty when the web process starts. */
  since: Date;
};

const DAY_MS = 86_400_000;

/** p99 over every provider's acknowledgements (all tenants: the histogram has no tenant label), over the two rolling windows. */
export async function ackLatencyP99(now = Date.now()): Promise<AckLatency> {
  const m = metrics();
  const current = await cumulativeBuckets(m.ackLatency);
  const sloSeconds = config().TALLY_ACK_SLO_MS / 1000;
  const windowOf = (windowMs: number): AckWindow => {
    const w = m.ackWindows.window(now, windowMs, current);
    const p99 = estimateQuantile(w.buckets, 0.99);
    return { windowMs, from: new Date(w.from), p99, deliveries: w.count, tone: sloTone(p99, sloSeconds) };
  };
  return {
    sloSeconds,
    recent: windowOf(config().TALLY_ACK_RECENT_WINDOW_MS),
    day: windowOf(DAY_MS),
    since: new Date(Date.now() - process.uptime() * 1000),
  };
}
