// Rolling windows over a cumulative histogram. A Prometheus histogram only ever
// grows (its buckets count every observation since the process started), so
// "the last 15 minutes" is the difference between its buckets now and a
// snapshot taken 15 minutes ago. This keeps a bounded ring of such snapshots,
// taken every `everyMs`; the first one is taken when the ring is created, when
// the histogram is known to be empty, so a window longer than the process's
// life honestly starts at that snapshot.

/** Cumulative counts: `count` observations were ≤ `le` seconds. The last bucket is +Inf. */
export type Bucket = { le: number; count: number };

export type Snapshot = { at: number; buckets: Bucket[] };

/** What a window covers: the buckets observed between `from` and `to` (epoch ms). */
export type WindowCounts = { from: number; to: number; buckets: Bucket[]; count: number };

export class HistogramWindows {
  private readonly ring: Snapshot[] = [];

  constructor(private readonly o: { everyMs: number; keep: number }) {}

  /** Adds a snapshot unless the newest one is younger than half of `everyMs` (timers jitter); drops the oldest past `keep`. */
  record(at: number, buckets: Bucket[]): void {
    const last = this.ring.at(-1);
    if (last && at - last.at < this.o.everyMs / 2) return;
    this.ring.push({ at, buckets: buckets.map((b) => ({ ...b })) });
    if (this.ring.length > this.o.keep) this.ring.splice(0, this.ring.length - this.o.keep);
  }

  /**
   * The observations since the newest snapshot at or before `now - windowMs`
   * (so the window is at least `windowMs` long, by at most one interval more),
   * or since the oldest snapshot kept when none is that old.
   */
  window(now: number, windowMs: number, current: Bucket[]): WindowCounts {
    const edge = now - windowMs;
    let base: Snapshot | undefined;
    for (const s of this.ring) {
      if (s.at <= edge) base = s;
      else break;
    }
    base ??= this.ring[0];
    const before = new Map((base?.buckets ?? []).map((b) => [b.le, b.count]));
    // A bucket missing from the snapshot had no observations then (prom-client omits no buckets, but a label set may be new).
    const buckets = current.map((b) => ({ le: b.le, count: Math.max(0, b.count - (before.get(b.le) ?? 0)) }));
    return { from: base?.at ?? now, to: now, buckets, count: buckets.find((b) => !Number.isFinite(b.le))?.count ?? 0 };
  }

  get size(): number {
    return this.ring.length;
  }
}

type HistogramLike = { get(): Promise<{ values: { metricName?: string; labels: object; value: number }[] }> };

/** A prom-client histogram's buckets summed over its labels (e.g. every provider), ascending. */
export async function cumulativeBuckets(histogram: HistogramLike): Promise<Bucket[]> {
  const { values } = await histogram.get();
  const byLe = new Map<number, number>();
  for (const v of values) {
    if (!v.metricName?.endsWith("_bucket")) continue;
    const raw = (v.labels as Record<string, string | number | undefined>).le;
    const le = raw === "+Inf" ? Infinity : Number(raw);
    byLe.set(le, (byLe.get(le) ?? 0) + v.value);
  }
  return [...byLe].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}
