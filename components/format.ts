// Times and durations as people read them on the dashboard: UTC, rounded to
// what matters ("3 min", "2 h 5 min"), never "0.000347 s".

/** "2026-12-02 14:03:07" (UTC). */
export function utc(iso: string | Date | null | undefined, withSeconds = true): string {
  if (!iso) return "—";
  const s = (typeof iso === "string" ? iso : iso.toISOString()).replace("T", " ");
  return s.slice(0, withSeconds ? 19 : 16);
}

/** 45 s, 3 min, 2 h 5 min, 3 d 4 h. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h${m % 60 ? ` ${m % 60} min` : ""}`;
  const d = Math.floor(h / 24);
  return `${d} d${h % 24 ? ` ${h % 24} h` : ""}`;
}

/** Seconds as milliseconds for latencies: "12 ms", "1.2 s". */
export function latency(seconds: number): string {
  return seconds < 1
    ? `${seconds * 1000 < 10 ? (seconds * 1000).toFixed(1) : Math.round(seconds * 1000)} ms`
    : `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
}

export function ago(iso: string | Date, now = Date.now()): string {
  return `${duration(now - new Date(iso).getTime())} ago`;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
