// Period exports for accountants and auditors (issue #21.7): discrepancies, cases
// and the audit log of one tenant as CSV, every cell through lib/platform/csv-writer
// (formula-safe). Rows are read in pages of PAGE by keyset and streamed, so a
// year of audit log costs one page of memory, not the whole file.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import type { Role } from "@/lib/generated/prisma/enums";
import { Prisma, prisma } from "@/lib/platform/db";
import { calendarDay } from "@/lib/platform/query-params";
import { csvRow, type CsvCell } from "@/lib/platform/csv-writer";
import {
  CASE_KIND_LABEL,
  CASE_STATUS_LABEL,
  reasonCodeLabel,
  type CaseKindCode,
  type CaseStatusCode,
} from "@/lib/cases/labels";
import { ageBucketOf, ageInDays } from "@/lib/cases/aging";
import { isOverdue } from "@/lib/cases/due";
import { conflictStake, discrepancyStake } from "@/lib/cases/stake";

export type ExportKind = "discrepancies" | "cases" | "audit";
export const EXPORT_KINDS: readonly ExportKind[] = ["discrepancies", "cases", "audit"];

/** A half-open period [from, to) of instants (the route turns days into their bounds). */
export type Period = { from: Date; to: Date };

/** Both days required and included; at most ten years, so a typo cannot ask for all of time. */
export const PeriodQuery = z
  .object({ from: calendarDay, to: calendarDay })
  .refine((q) => q.from <= q.to, { message: "from must be on or before to", path: ["from"] })
  .refine((q) => Date.parse(q.to) - Date.parse(q.from) <= 3660 * 86_400_000, {
    message: "a period is at most ten years",
    path: ["to"],
  })
  .transform((q) => ({
    fromDay: q.from,
    toDay: q.to,
    from: new Date(`${q.from}T00:00:00Z`),
    to: new Date(Date.parse(`${q.to}T00:00:00Z`) + 86_400_000),
  }));

const PAGE = 1000;
const iso = (d: Date | null) => (d ? d.toISOString() : null);

type Export = { header: readonly string[]; rows: (tenantId: string, p: Period) => AsyncGenerator<CsvCell[]> };

/** Pages through a query ordered by id ascending, from after `after`. */
async function* pages<T extends { id: bigint }>(page: (after: bigint) => Promise<T[]>): AsyncGenerator<T> {
  let after = 0n;
  for (;;) {
    const rows = await page(after);
    yield* rows;
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.id;
  }
}

const EXPORTS: Record<ExportKind, Export> = {
  // Discrepancies whose money moved in the period (the day the trend counts them on), as UTC days
  // whatever the database session's time zone.
  discrepancies: {
    header: [
      "id",
      "day",
      "provider",
      "reference",
      "bucket",
      "state",
      "possible_timing",
      "their_amount_minor",
      "their_currency",
      "our_amount_minor",
      "our_currency",
      "posting_id",
      "case_id",
      "case_status",
      "case_status_label",
      "first_run_id",
      "last_run_id",
      "detected_at",
      "resolved_at",
      "note",
    ],
    async *rows(tenantId, p) {
      type Row = {
        id: bigint;
        day: Date;
        provider: string;
        reference: string;
        bucket: string;
        state: string;
        possible_timing: boolean;
        their_amount: bigint | null;
        their_currency: string | null;
        our_amount: bigint | null;
        our_currency: string | null;
        posting_id: bigint | null;
        case_id: bigint | null;
        case_status: CaseStatusCode | null;
        first_run_id: bigint;
        last_run_id: bigint;
        detected_at: Date;
        resolved_at: Date | null;
        note: string | null;
      };
      for await (const r of pages((after) =>
        prisma.$queryRaw<Row[]>(Prisma.sql`
          SELECT d.id, d.day, d.provider::text, d.reference, d.bucket::text, d.state::text, d.possible_timing,
                 d.their_amount, d.their_currency, d.our_amount, d.our_currency, d.posting_id,
                 c.id AS case_id, c.status::text AS case_status, d.first_run_id, d.last_run_id,
                 d.detected_at, d.resolved_at, d.note
          FROM recon_discrepancies d LEFT JOIN cases c ON c.discrepancy_id = d.id
          WHERE d.tenant_id = ${tenantId}::uuid AND d.day >= (${p.from}::timestamptz AT TIME ZONE 'UTC')::date AND d.day < (${p.to}::timestamptz AT TIME ZONE 'UTC')::date AND d.id > ${after}
          ORDER BY d.id LIMIT ${PAGE}`),
      ))
        yield [
          String(r.id),
          r.day.toISOString().slice(0, 10),
          r.provider,
          r.reference,
          r.bucket,
          r.state,
          r.possible_timing ? "yes" : "no",
          r.their_amount,
          r.their_currency?.trim() ?? null,
          r.our_amount,
          r.our_currency?.trim() ?? null,
          r.posting_id === null ? null : String(r.posting_id),
          r.case_id === null ? null : String(r.case_id),
          r.case_status,
          r.case_status ? CASE_STATUS_LABEL[r.case_status] : null,
          String(r.first_run_id),
          String(r.last_run_id),
          iso(r.detected_at),
          iso(r.resolved_at),
          r.note,
        ];
    },
  },
  // Cases open at any moment of the period: opened before its end and not closed before its start
  // (so both those opened or closed in it and those open throughout, which a close carries over);
  // in_period says which. Age, aging bucket and SLA are as of the export (a closed case: until it closed).
  cases: {
    header: [
      "id",
      "kind",
      "kind_label",
      "status",
      "status_label",
      "in_period",
      "provider",
      "reference",
      "assignee",
      "opened_at",
      "due_at",
      "closed_at",
      "age_days",
      "age_bucket",
      "sla",
      "snoozed_until",
      "snooze_reason",
      "resolution",
      "stake_minor",
      "stake_currency",
      "linked_lines",
      "last_proposal",
      "last_proposal_reason",
      "last_proposal_reason_code",
      "amount_minor",
      "currency",
      "proposed_by",
      "proposed_at",
      "decided_by",
    ],
    async *rows(tenantId, p) {
      type Row = {
        id: bigint;
        kind: CaseKindCode;
        status: CaseStatusCode;
        provider: string | null;
        reference: string | null;
        assignee: string | null;
        opened_at: Date;
        due_at: Date | null;
        closed_at: Date | null;
        snoozed_until: Date | null;
        snooze_reason: string | null;
        resolution: string | null;
        our_amount: bigint | null;
        our_currency: string | null;
        their_amount: bigint | null;
        their_currency: string | null;
        claimed: { amount?: string; currency?: string } | null;
        delivered: { amount?: string; currency?: string } | null;
        linked_lines: string | null;
        proposal_resolution: string | null;
        proposal_reason: string | null;
        reason_code: string | null;
        amount: bigint | null;
        currency: string | null;
        proposed_by: string | null;
        proposed_at: Date | null;
        decided_by: string | null;
      };
      const now = new Date();
      const inPeriod = (d: Date | null) => d !== null && d >= p.from && d < p.to;
      for await (const r of pages((after) =>
        prisma.$queryRaw<Row[]>(Prisma.sql`
          SELECT c.id, c.kind::text, c.status::text,
                 coalesce(d.provider::text, k.provider::text) AS provider,
                 coalesce(d.reference, k.reference) AS reference,
                 u.email AS assignee, c.opened_at, c.due_at, c.closed_at, c.snoozed_until, c.snooze_reason, c.resolution,
                 d.our_amount, d.our_currency, d.their_amount, d.their_currency, k.claimed, k.delivered,
                 (SELECT string_agg(ld.reference || ' ' || l.amount || ' ' || l.currency, '; ' ORDER BY l.id)
                    FROM case_links l JOIN case_proposals lp2 ON lp2.id = l.proposal_id AND lp2.status = 'APPROVED'
                    JOIN recon_discrepancies ld ON ld.id = l.discrepancy_id
                    WHERE l.tenant_id = c.tenant_id AND lp2.case_id = c.id) AS linked_lines,
                 lp.resolution::text AS proposal_resolution, lp.reason AS proposal_reason, lp.reason_code,
                 lp.amount, lp.currency, lp.proposed_by_label AS proposed_by, lp.proposed_at,
                 (SELECT string_agg(a.approver_label || ' (' || lower(a.decision::text) || ')', '; ' ORDER BY a.at)
                    FROM case_approvals a WHERE a.proposal_id = lp.id) AS decided_by
          FROM cases c
          LEFT JOIN users u ON u.id = c.assignee_id
          LEFT JOIN recon_discrepancies d ON d.id = c.discrepancy_id
          LEFT JOIN claim_conflicts k ON k.id = c.conflict_id
          LEFT JOIN LATERAL (SELECT * FROM case_proposals q WHERE q.case_id = c.id ORDER BY q.id DESC LIMIT 1) lp ON true
          WHERE c.tenant_id = ${tenantId}::uuid AND c.opened_at < ${p.to}
            AND (c.closed_at IS NULL OR c.closed_at >= ${p.from}) AND c.id > ${after}
          ORDER BY c.id LIMIT ${PAGE}`),
      )) {
        const open = r.closed_at === null;
        const end = r.closed_at ?? now;
        // What the case puts at stake: the figure its last proposal was judged by, else the case's own.
        const stake =
          r.amount !== null && r.currency
            ? { amount: r.amount, currency: r.currency.trim() }
            : r.claimed || r.delivered
              ? conflictStake([r.claimed ?? {}, r.delivered ?? {}])
              : discrepancyStake({
                  ourAmount: r.our_amount,
                  ourCurrency: r.our_currency,
                  theirAmount: r.their_amount,
                  theirCurrency: r.their_currency,
                });
        // Open: overdue or still within its SLA; closed: whether it closed by its due date.
        let sla: string | null = null;
        if (r.due_at !== null && open) sla = isOverdue({ dueAt: r.due_at, closedAt: null }, now) ? "overdue" : "within";
        else if (r.due_at !== null) sla = r.closed_at! > r.due_at ? "missed" : "met";
        const opened = inPeriod(r.opened_at);
        const closed = inPeriod(r.closed_at);
        yield [
          String(r.id),
          r.kind,
          CASE_KIND_LABEL[r.kind],
          r.status,
          CASE_STATUS_LABEL[r.status],
          opened && closed ? "opened_and_closed" : opened ? "opened" : closed ? "closed" : "open_throughout",
          r.provider,
          r.reference,
          r.assignee,
          iso(r.opened_at),
          iso(r.due_at),
          iso(r.closed_at),
          String(ageInDays(r.opened_at, end)),
          open ? ageBucketOf(r.opened_at, now) : null,
          sla,
          open && r.snoozed_until && r.snoozed_until > now ? iso(r.snoozed_until) : null,
          open && r.snoozed_until && r.snoozed_until > now ? r.snooze_reason : null,
          r.resolution,
          stake && stake.amount > 0n ? stake.amount : null,
          stake && stake.amount > 0n ? stake.currency : null,
          r.linked_lines,
          r.proposal_resolution,
          r.proposal_reason,
          r.reason_code ? reasonCodeLabel(r.reason_code) : null,
          r.amount,
          r.currency?.trim() ?? null,
          r.proposed_by,
          iso(r.proposed_at),
          r.decided_by,
        ];
      }
    },
  },
  // The tenant's own entries (never those tied to no tenant: sign-ins, admin users).
  audit: {
    header: ["id", "at", "actor_type", "actor", "action", "subject_type", "subject_id", "reason", "details"],
    async *rows(tenantId, p) {
      for await (const r of pages((after) =>
        prisma.auditLog.findMany({
          where: { tenantId, at: { gte: p.from, lt: p.to }, id: { gt: after } },
          orderBy: { id: "asc" },
          take: PAGE,
        }),
      ))
        yield [
          String(r.id),
          iso(r.at),
          r.actorType,
          r.actorLabel,
          r.action,
          r.subjectType,
          r.subjectId,
          r.reason,
          JSON.stringify(r.details),
        ];
    },
  },
};

/** The export as a byte stream: header, then one line per row, pulled as the client reads. */
export function exportCsv(kind: ExportKind, tenantId: string, period: Period): ReadableStream<Uint8Array> {
  const e = EXPORTS[kind];
  const encoder = new TextEncoder();
  const rows = e.rows(tenantId, period);
  let headerSent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(encoder.encode(`${csvRow(e.header)}\n`));
        return;
      }
      // A page's worth of lines per pull keeps the chunks large and the memory to one page.
      const lines: string[] = [];
      for (let i = 0; i < PAGE; i++) {
        const next = await rows.next();
        if (next.done) {
          if (lines.length) controller.enqueue(encoder.encode(lines.join("")));
          controller.close();
          return;
        }
        lines.push(`${csvRow(next.value)}\n`);
      }
      controller.enqueue(encoder.encode(lines.join("")));
    },
    async cancel() {
      await rows.return(undefined);
    },
  });
}

/**
 * GET …/exports/{kind}?from=YYYY-MM-DD&to=YYYY-MM-DD (both days included, UTC):
 * the route for one kind, readable by the roles of the section it exports.
 */
export function exportRoute(kind: ExportKind, roles: readonly Role[]) {
  return withTenant({ roles, query: PeriodQuery }, async ({ tenant, query }) => {
    const name = `${kind}-${tenant.slug}-${query.fromDay}-to-${query.toDay}.csv`;
    return new Response(exportCsv(kind, tenant.id, query), {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="${name}"`,
        "cache-control": "no-store",
      },
    });
  });
}
