// Who works a case: a member of the tenant who may work cases (an accountant,
// or an admin), or nobody. Changing it is audited with the reason, in the same
// transaction, like every change a person makes to a case.
import { recordAudit } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import type { DomainResult } from "@/lib/platform/refusal";
import { lockCase, type Person } from "@/lib/cases/cases";
import { ASSIGNABLE_ROLES } from "@/lib/cases/people";

export type Assignment = { assigneeId: string | null; reason: string };
export type Assigned = { assigneeId: string | null; assigneeLabel: string | null };

export async function assignCase(
  tenantId: string,
  caseId: bigint,
  actor: Person,
  input: Assignment,
): Promise<DomainResult<Assigned>> {
  const reason = input.reason.trim();
  if (reason.length < 3)
    return { ok: false, reason: "reason_required", message: "Say why, in a few words: the audit log keeps it" };
  return prisma.$transaction(async (tx): Promise<DomainResult<Assigned>> => {
    const c = await lockCase(tx, tenantId, caseId);
    if (!c) return { ok: false, reason: "not_found", message: `No case ${caseId} in this tenant` };
    if (c.status === "RESOLVED")
      return { ok: false, reason: "not_open", message: `Case ${caseId} is resolved: there is nothing left to work on` };
    const current = await tx.case.findUniqueOrThrow({
      where: { id: caseId },
      select: { assignee: { select: { id: true, email: true } } },
    });
    let assignee: { id: string; email: string } | null = null;
    if (input.assigneeId !== null) {
      const u = await tx.user.findFirst({
        where: { id: input.assigneeId, tenants: { some: { tenantId } } },
        select: { id: true, email: true, role: true, disabledAt: true },
      });
      // Someone outside the tenant reads as unknown: an assignment must not tell who exists elsewhere.
      if (!u) return { ok: false, reason: "invalid_assignee", message: `No member ${input.assigneeId} in this tenant` };
      if (u.disabledAt)
        return {
          ok: false,
          reason: "invalid_assignee",
          message: `${u.email} is disabled: assign someone who can sign in`,
        };
      if (!ASSIGNABLE_ROLES.includes(u.role))
        return {
          ok: false,
          reason: "invalid_assignee",
          message: `${u.email} is ${u.role}: cases are worked by accountants (or admins)`,
        };
      assignee = { id: u.id, email: u.email };
    }
    if ((current.assignee?.id ?? null) === (assignee?.id ?? null))
      return {
        ok: false,
        reason: "nothing_to_do",
        message: assignee
          ? `Case ${caseId} is already assigned to ${assignee.email}`
          : `Case ${caseId} is not assigned`,
      };
    await tx.case.update({ where: { id: caseId }, data: { assigneeId: assignee?.id ?? null } });
    await recordAudit(tx, {
      actor: { type: "USER", id: actor.userId, label: actor.label },
      action: assignee ? "case.assign" : "case.unassign",
      subjectType: "case",
      subjectId: String(caseId),
      tenantId,
      reason,
      details: { from: current.assignee?.email ?? null, to: assignee?.email ?? null },
    });
    return { ok: true, value: { assigneeId: assignee?.id ?? null, assigneeLabel: assignee?.email ?? null } };
  });
}
