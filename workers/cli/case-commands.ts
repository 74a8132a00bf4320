// cases commands: what reconciliation left for a person to decide, from the
// shell. Read-only: assigning, snoozing, proposing and approving happen signed in
// (audited as a person; four-eyes).
import { AGE_BUCKETS, isAgeBucket } from "@/lib/cases/aging";
import { CASE_KIND_LABEL } from "@/lib/cases/labels";
import { CASE_STATES, listCases, type AssigneeFilter, type CaseState } from "@/lib/cases/list";
import { daysUntilDue } from "@/lib/cases/due";
import { prisma } from "@/lib/platform/db";
import { flags, printJson, table, UsageError, type Command } from "@/workers/cli/framework";
import { requireTenant } from "@/workers/cli/setup-commands";

const minor = (amount: bigint | null, currency: string | null) =>
  amount === null || !currency ? "" : `${amount} ${currency.trim()} (minor)`;

const due = (dueAt: Date | null, closed: boolean, now: Date) => {
  if (!dueAt || closed) return "";
  const days = daysUntilDue(dueAt, now);
  return days < 0 ? `overdue ${-days}d` : `in ${days}d`;
};

export const caseCommands: Command[] = [
  {
    name: "cases list",
    summary:
      "List a tenant's cases (open by default; snoozed ones with --state snoozed) with assignee, age and due date, and any proposal waiting for approval",
    options: flags({
      tenant: "string",
      state: "string",
      assignee: "string",
      age: "string",
      overdue: "boolean",
      limit: "string",
      json: "boolean",
    }),
    required: ["tenant"],
    database: true,
    async run(a) {
      const state = String(a.state ?? "open");
      if (!CASE_STATES.includes(state as CaseState))
        throw new UsageError(`--state must be ${CASE_STATES.slice(0, -1).join(", ")} or ${CASE_STATES.at(-1)}`);
      const limit = a.limit === undefined ? 50 : Number(a.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 200)
        throw new UsageError("--limit must be a whole number from 1 to 200");
      if (a.age !== undefined && !isAgeBucket(a.age))
        throw new UsageError(`--age must be one of ${AGE_BUCKETS.map((b) => b.bucket).join(", ")}`);
      const tenant = await requireTenant(a.tenant);
      let assignee: AssigneeFilter | undefined;
      if (a.assignee === "unassigned") assignee = "unassigned";
      else if (a.assignee !== undefined) {
        const u = await prisma.user.findUnique({ where: { email: String(a.assignee).toLowerCase() } });
        if (!u) throw new UsageError(`--assignee: no user ${a.assignee} (give an email, or unassigned)`);
        assignee = { userId: u.id };
      }
      const { cases, now } = await listCases({
        tenantId: tenant.id,
        state: state as CaseState,
        assignee,
        age: isAgeBucket(a.age) ? a.age : undefined,
        overdue: Boolean(a.overdue),
        limit,
      });
      if (a.json) return printJson(cases);
      console.log(
        table(
          cases.map((c) => {
            const p = c.proposals[0];
            return {
              id: c.id,
              kind:
                c.kind === "OURS_NOT_THEIRS"
                  ? "ours-not-theirs"
                  : c.kind === "CONFLICT"
                    ? `conflict (${c.conflict?.kind.toLowerCase().replace("_", " ")})`
                    : c.kind === "MISMATCH"
                      ? "mismatch"
                      : CASE_KIND_LABEL[c.kind],
              status: c.status,
              provider: c.discrepancy?.provider ?? c.conflict?.provider,
              reference: c.discrepancy?.reference ?? c.conflict?.reference,
              day: (c.discrepancy?.day ?? c.conflict?.detectedAt)?.toISOString().slice(0, 10),
              ours: c.discrepancy ? minor(c.discrepancy.ourAmount, c.discrepancy.ourCurrency) : "",
              theirs: c.discrepancy ? minor(c.discrepancy.theirAmount, c.discrepancy.theirCurrency) : "",
              assignee: c.assignee?.email ?? "",
              age: c.ageDays === null ? "" : `${c.ageDays}d (${c.ageBucket})`,
              due: due(c.dueAt, c.closedAt !== null, now),
              snoozed: c.snoozed ? `until ${c.snoozedUntil!.toISOString().slice(0, 10)}` : "",
              proposal: p
                ? `${p.resolution.toLowerCase()} by ${p.proposedByLabel}, ${p.approvals.filter((x) => x.decision === "APPROVE").length}/${p.requiredApprovals} approvals`
                : "",
            };
          }),
        ),
      );
      console.log(
        `\n${cases.length} ${state === "all" ? "" : `${state} `}case(s). Decide them in the dashboard: /t/${tenant.slug}/cases`,
      );
    },
  },
];
