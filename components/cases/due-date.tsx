// A case's due date as people read it: the day, and how far off or how overdue.
// Overdue is open and past due (lib/cases/sla.ts); a resolved case shows no due state.
import { daysUntilDue } from "@/lib/cases/due";

export function DueDate({ dueAt, closed, now }: { dueAt: Date | string | null; closed: boolean; now: Date | string }) {
  if (!dueAt) return <span className="muted">—</span>;
  const due = new Date(dueAt);
  const day = due.toISOString().slice(0, 10);
  if (closed) return <span className="muted">{day}</span>;
  const days = daysUntilDue(due, new Date(now));
  if (due.getTime() < new Date(now).getTime())
    return (
      <span className="tone-bad" data-testid="overdue">
        {day}
        <span className="small"> · overdue {-days === 1 ? "by a day" : `by ${-days} days`}</span>
      </span>
    );
  return (
    <span>
      {day}
      <span className="small muted">
        {" "}
        · {days === 0 ? "due within a day" : `in ${days} day${days === 1 ? "" : "s"}`}
      </span>
    </span>
  );
}
