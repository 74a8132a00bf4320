// The audit trail: who did what to which thing, when and why. Written in the
// same transaction as the change it describes, so neither exists without the other.
import os from "node:os";
import { prisma, type Tx } from "@/lib/platform/db";
import type { ActorType } from "@/lib/generated/prisma/enums";

export type Actor = { type: ActorType; id?: string; label: string };

export const SYSTEM_ACTOR: Actor = { type: "SYSTEM", label: "tally" };

/** The OS user running the CLI: the best identity a shell gives us. */
export function cliActor(): Actor {
  const user = os.userInfo().username || "unknown";
  return { type: "CLI", id: user, label: `cli:${user}` };
}

export type AuditEntry = {
  actor: Actor;
  action: string;
  subjectType: string;
  subjectId: string;
  tenantId?: string | null;
  reason?: string | null;
  details?: Record<string, unknown>;
};

export async function recordAudit(tx: Tx, entry: AuditEntry): Promise<void> {
  await tx.auditLog.create({
    data: {
      actorType: entry.actor.type,
      actorId: entry.actor.id ?? null,
      actorLabel: entry.actor.label,
      tenantId: entry.tenantId ?? null,
      action: entry.action,
      subjectType: entry.subjectType,
      subjectId: entry.subjectId,
      reason: entry.reason ?? null,
      details: JSON.parse(JSON.stringify(entry.details ?? {}, (_k, v) => (typeof v === "bigint" ? v.toString() : v))),
    },
  });
}

export type AuditFilter = {
  /** A tenant's entries; with `includeGlobal`, also those tied to no tenant (sign-ins, admin users). */
  tenantId: string;
  includeGlobal?: boolean;
  action?: string;
  actor?: string;
  from?: Date;
  to?: Date;
  limit?: number;
  beforeId?: bigint;
};

/** One page of the audit log, newest first. */
export async function listAudit(filter: AuditFilter) {
  const limit = Math.min(filter.limit ?? 50, 500);
  const rows = await prisma.auditLog.findMany({
    where: {
      ...(filter.includeGlobal
        ? { OR: [{ tenantId: filter.tenantId }, { tenantId: null }] }
        : { tenantId: filter.tenantId }),
      ...(filter.action && { action: { startsWith: filter.action } }),
      ...(filter.actor && { actorLabel: { contains: filter.actor, mode: "insensitive" as const } }),
      ...((filter.from || filter.to) && {
        at: { ...(filter.from && { gte: filter.from }), ...(filter.to && { lt: filter.to }) },
      }),
      ...(filter.beforeId && { id: { lt: filter.beforeId } }),
    },
    orderBy: { id: "desc" },
    take: limit + 1,
  });
  const entries = rows.slice(0, limit);
  return { entries, nextBefore: rows.length > limit ? entries[entries.length - 1]!.id : null };
}
