// Aging of open cases: whole days since the case opened, in the buckets
// accountants report a close with. A day is 24 hours from the opening instant,
// whatever the time zone, so a case is in "2–7" from exactly 48 hours old.
// Pure (no database): the list's filters, its counts, each row and the export
// use the same bounds.

export type AgeBucket = "0-1" | "2-7" | "8-30" | "31+";

const DAY_MS = 86_400_000;

/** Each bucket's ages in whole days, [min, max]; the last has no maximum. */
export const AGE_BUCKETS: readonly { bucket: AgeBucket; label: string; minDays: number; maxDays: number | null }[] = [
  { bucket: "0-1", label: "0–1 days", minDays: 0, maxDays: 1 },
  { bucket: "2-7", label: "2–7 days", minDays: 2, maxDays: 7 },
  { bucket: "8-30", label: "8–30 days", minDays: 8, maxDays: 30 },
  { bucket: "31+", label: "over 30 days", minDays: 31, maxDays: null },
];

export const isAgeBucket = (v: unknown): v is AgeBucket => AGE_BUCKETS.some((b) => b.bucket === v);

/** Whole days elapsed from `openedAt` to `now`. */
export function ageInDays(openedAt: Date, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - openedAt.getTime()) / DAY_MS));
}

export function ageBucketOf(openedAt: Date, now: Date): AgeBucket {
  const days = ageInDays(openedAt, now);
  return AGE_BUCKETS.find((b) => days >= b.minDays && (b.maxDays === null || days <= b.maxDays))!.bucket;
}

/**
 * The opening instants of a bucket's cases at `now`: opened after `after` (an age
 * below maxDays + 1 whole days) and at or before `notAfter` (at least minDays old).
 */
export function openedWithin(bucket: AgeBucket, now: Date): { gt?: Date; lte?: Date } {
  const b = AGE_BUCKETS.find((x) => x.bucket === bucket)!;
  const t = now.getTime();
  return {
    ...(b.maxDays !== null && { gt: new Date(t - (b.maxDays + 1) * DAY_MS) }),
    ...(b.minDays > 0 && { lte: new Date(t - b.minDays * DAY_MS) }),
  };
}
