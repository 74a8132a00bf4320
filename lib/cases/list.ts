// The cases list as an accountant runs a close with it: open cases by default
// (snoozed ones hidden until their date, then back by themselves: the query
// compares with now, no job wakes them), filtered by kind, assignee, age bucket
// and overdue; each row with its age, due date and snooze; and the counts per
// age bucket of the same selection for the top of the page.
import type { CaseKind } from "@/lib/generated/prisma/enums";
import { type Prisma, prisma } from "@/lib/platform/db";
import { OPEN_STATUSES } from "@/lib/cases/cases";
import { AGE_BUCKETS, ageBucketOf, ageInDays, openedWithin, type AgeBucket } from "@/lib/cases/aging";
import { isOverdue } from "@/lib/cases/due";

export type CaseState = "open" | "snoozed" | "closed" | "all";
export const CASE_STATES: readonly CaseState[] = ["open", "snoozed", "closed", "all"];

/** Whose cases: one person's, or nobody's yet. */
export type AssigneeFilter = { userId: string } | "unassigned";

export type CaseFilter = {
  tenantId: string;
  state?: CaseState;
  kind?: CaseKind;
  assignee?: AssigneeFilter;
  age?: AgeBucket;
  overdue?: boolean;
  limit?: number;
  beforeId?: bigint;
  /** The instant ages, due dates and snoozes are read at. */
  now?: Date;
};

/**
 * Snoozed: open with a snooze date still ahead. A case waiting for approval is
 * never hidden, snoozed or not: its checker has to see it.
 */
function snoozedNow(now: Date): Prisma.CaseWhereInput {
  return { snoozedUntil: { gt: now }, status: { in: OPEN_STATUSES.filter((s) => s !== "PROPOSED") } };
}

function whereOf(filter: CaseFilter, now: Date, withAge: boolean): Prisma.CaseWhereInput {
  const state = filter.state ?? "open";
  const and: Prisma.CaseWhereInput[] = [{ tenantId: filter.tenantId }];
  // Spelt out rather than NOT(snoozed): NOT of a comparison with a NULL snooze date is NULL in SQL, which hides the case.
  if (state === "open")
    and.push(
      { status: { in: [...OPEN_STATUSES] } },
      { OR: [{ snoozedUntil: null }, { snoozedUntil: { lte: now } }, { status: "PROPOSED" }] },
    );
  if (state === "snoozed") and.push(snoozedNow(now));
  if (state === "closed") and.push({ status: "RESOLVED" });
  if (filter.kind) and.push({ kind: filter.kind });
  if (filter.assignee) and.push({ assigneeId: filter.assignee === "unassigned" ? null : filter.assignee.userId });
  // Age and due dates are about open cases: with them, closed ones drop out of "all".
  if (withAge && filter.age) and.push({ openedAt: openedWithin(filter.age, now), closedAt: null });
  if (filter.overdue) and.push({ dueAt: { lt: now }, closedAt: null, status: { in: [...OPEN_STATUSES] } });
  return { AND: and };
}

export async function listCases(filter: CaseFilter) {
  const now = filter.now ?? new Date();
  const limit = Math.min(filter.limit ?? 50, 200);
  const rows = await prisma.case.findMany({
    where: { AND: [whereOf(filter, now, true), ...(filter.beforeId ? [{ id: { lt: filter.beforeId } }] : [])] },
    orderBy: { id: "desc" },
    take: limit + 1,
    include: {
      assignee: { select: { id: true, email: true, name: true } },
      discrepancy: {
        select: {
          provider: true,
          reference: true,
          day: true,
          ourAmount: true,
          ourCurrency: true,
          theirAmount: true,
          theirCurrency: true,
          possibleTiming: true,
        },
      },
      conflict: {
        select: { kind: true, provider: true, reference: true, detectedAt: true, claimed: true, delivered: true },
      },
      proposals: {
        where: { status: "PENDING" },
        select: {
          id: true,
          resolution: true,
          proposedByLabel: true,
          proposedById: true,
          requiredApprovals: true,
          approvals: { select: { approverLabel: true, decision: true } },
        },
      },
    },
  });
  const cases = rows.slice(0, limit).map((c) => {
    const open = c.closedAt === null;
    return {
      ...c,
      ageDays: open ? ageInDays(c.openedAt, now) : null,
      ageBucket: open ? ageBucketOf(c.openedAt, now) : null,
      overdue: isOverdue(c, now),
      snoozed: c.snoozedUntil !== null && c.snoozedUntil > now && open && c.status !== "PROPOSED",
    };
  });
  return { cases, nextBefore: rows.length > limit ? cases[cases.length - 1]!.id : null, now };
}

export type CaseListPage = Awaited<ReturnType<typeof listCases>>;
export type CaseListRow = CaseListPage["cases"][number];

export type AgingCounts = { buckets: Record<AgeBucket, number>; overdue: number; snoozed: number; open: number };

/**
 * For the top of the list: open cases per age bucket, overdue and snoozed, of the
 * list's selection without its own age filter (so each bucket's count is what
 * choosing it lists). A closed or all view counts the open cases of its filters.
 */
export async function agingCounts(filter: CaseFilter): Promise<AgingCounts> {
  const now = filter.now ?? new Date();
  const base: CaseFilter = {
    ...filter,
    state: filter.state === "snoozed" ? "snoozed" : "open",
    age: undefined,
  };
  const where = whereOf(base, now, false);
  const count = (extra: Prisma.CaseWhereInput) => prisma.case.count({ where: { AND: [where, extra] } });
  const [open, overdue, snoozed, ...perBucket] = await Promise.all([
    count({}),
    count({ dueAt: { lt: now } }),
    prisma.case.count({ where: whereOf({ ...base, state: "snoozed" }, now, false) }),
    ...AGE_BUCKETS.map((b) => count({ openedAt: openedWithin(b.bucket, now) })),
  ]);
  return {
    buckets: Object.fromEntries(AGE_BUCKETS.map((b, i) => [b.bucket, perBucket[i]!])) as Record<AgeBucket, number>,
    overdue,
    snoozed,
    open,
  };
}
