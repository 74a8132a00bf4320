// Snoozing a case: out of the default open list until a date, with why. Nothing
// wakes it: the list compares the date with now (lib/cases/list.ts), so the case
// is back by itself once the date has passed. Snooze and unsnooze are audited.
import { recordAudit } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import type { DomainResult } from "@/lib/platform/refusal";
import { lockCase, type Person } from "@/lib/cases/cases";

/** A snooze is a reminder, not a way to park a case out of sight for a quarter. */
export const MAX_SNOOZE_DAYS = 90;
const DAY_MS = 86_400_000;

export type Snooze = { until: Date; reason: string };
export type Snoozed = { snoozedUntil: Date | null };

export async function snoozeCase(
  tenantId: string,
  caseId: bigint,
  actor: Person,
  input: Snooze,
  now = new Date(),
): Promise<DomainResult<Snoozed>> {
  const reason = input.reason.trim();
  if (reason.length < 3)
    return {
      ok: false,
      reason: "reason_required",
      message: "Say why it can wait, in a few words: the audit log keeps it",
    };
  if (Number.isNaN(input.until.getTime()) || input.until <= now)
    return { ok: false, reason: "invalid_snooze", message: "Snooze until a date in the future" };
  if (input.until.getTime() - now.getTime() > MAX_SNOOZE_DAYS * DAY_MS)
    return {
      ok: false,
      reason: "invalid_snooze",
      message: `Snooze for at most ${MAX_SNOOZE_DAYS} days (until ${new Date(now.getTime() + MAX_SNOOZE_DAYS * DAY_MS).toISOString().slice(0, 10)})`,
    };
  return prisma.$transaction(async (tx): Promise<DomainResult<Snoozed>> => {
    const c = await lockCase(tx, tenantId, caseId);
    if (!c) return { ok: false, reason: "not_found", message: `No case ${caseId} in this tenant` };
    if (c.status === "RESOLVED")
      return { ok: false, reason: "not_open", message: `Case ${caseId} is resolved: there is nothing to snooze` };
    if (c.status === "PROPOSED")
      return {
        ok: false,
        reason: "not_open",
        message: `Case ${caseId} has a proposal waiting for approval: snoozing it would hide it from its checker`,
      };
    const before = await tx.case.findUniqueOrThrow({ where: { id: caseId }, select: { snoozedUntil: true } });
    await tx.case.update({ where: { id: caseId }, data: { snoozedUntil: input.until, snoozeReason: reason } });
    await recordAudit(tx, {
      actor: { type: "USER", id: actor.userId, label: actor.label },
      action: "case.snooze",
      subjectType: "case",
      subjectId: String(caseId),
      tenantId,
      reason,
      details: {
        until: input.until.toISOString(),
        previously: before.snoozedUntil && before.snoozedUntil > now ? before.snoozedUntil.toISOString() : null,
      },
    });
    return { ok: true, value: { snoozedUntil: input.until } };
  });
}

export async function unsnoozeCase(
  tenantId: string,
  caseId: bigint,
  actor: Person,
  input: { reason: string },
  now = new Date(),
): Promise<DomainResult<Snoozed>> {
  const reason = input.reason.trim();
  if (reason.length < 3)
    return {
      ok: false,
      reason: "reason_required",
      message: "Say why it cannot wait, in a few words: the audit log keeps it",
    };
  return prisma.$transaction(async (tx): Promise<DomainResult<Snoozed>> => {
    const c = await lockCase(tx, tenantId, caseId);
    if (!c) return { ok: false, reason: "not_found", message: `No case ${caseId} in this tenant` };
    const row = await tx.case.findUniqueOrThrow({ where: { id: caseId }, select: { snoozedUntil: true } });
    if (!row.snoozedUntil || row.snoozedUntil <= now)
      return { ok: false, reason: "nothing_to_do", message: `Case ${caseId} is not snoozed` };
    await tx.case.update({ where: { id: caseId }, data: { snoozedUntil: null, snoozeReason: null } });
    await recordAudit(tx, {
      actor: { type: "USER", id: actor.userId, label: actor.label },
      action: "case.unsnooze",
      subjectType: "case",
      subjectId: String(caseId),
      tenantId,
      reason,
      details: { wasUntil: row.snoozedUntil.toISOString() },
    });
    return { ok: true, value: { snoozedUntil: null } };
  });
}
