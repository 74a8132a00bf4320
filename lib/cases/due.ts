// Due and overdue, from a case's due date (set when it opened: lib/cases/sla.ts).
// Pure, for the list, the case page, the CLI and the export alike.

const DAY_MS = 86_400_000;

/** Open and past its due date. */
export function isOverdue(c: { dueAt: Date | null; closedAt: Date | null }, now: Date): boolean {
  return c.closedAt === null && c.dueAt !== null && c.dueAt.getTime() < now.getTime();
}

/** Whole days until due (negative: overdue by that many; 0: due within the day). */
export function daysUntilDue(dueAt: Date, now: Date): number {
  const ms = dueAt.getTime() - now.getTime();
  return ms >= 0 ? Math.floor(ms / DAY_MS) : -Math.ceil(-ms / DAY_MS);
}
