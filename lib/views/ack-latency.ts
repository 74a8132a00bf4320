// The acknowledgement latency people see on the overview: the 99th percentile of
// this web process's tally_webhook_ack_seconds histogram, estimated from its
// buckets the way Prometheus' histogram_quantile does (linear within a bucket).
import { metrics } from "@/lib/platform/metrics";

/** Cumulative counts: `count` observations were ≤ `le` seconds. The last bucket is +Inf. */
export type Bucket = { le: number; count: number };

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

export type AckLatency = {
  p99: QuantileEstimate;
  deliveries: number;
  /** The histogram lives in this process's memory: it starts empty when the web process starts. */
  since: Date;
};

/** p99 over every provider's acknowledgements since this web process started (all tenants: the histogram has no tenant label). */
export async function ackLatencyP99(): Promise<AckLatency> {
  const { values } = await metrics().ackLatency.get();
  const byLe = new Map<number, number>();
  for (const v of values) {
    if (v.metricName !== "tally_webhook_ack_seconds_bucket") continue;
    const raw = (v.labels as Record<string, string | number | undefined>).le;
    const le = raw === "+Inf" ? Infinity : Number(raw);
    byLe.set(le, (byLe.get(le) ?? 0) + v.value);
  }
  const buckets = [...byLe].map(([le, count]) => ({ le, count }));
  return { p99: estimateQuantile(buckets, 0.99), deliveries: byLe.get(Infinity) ?? 0, since: new Date(Date.now() - process.uptime() * 1000) };
}
