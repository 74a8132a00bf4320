// Dead letters: receipts whose retry schedule ran out. Ops list them, preview how
// many a filter matches, and redeliver one, some or all: a redelivered receipt
// keeps its outbox id, so the receiver's idempotency key is the same and a
// receipt that did arrive after all is dropped there as a repeat. Each request is
// audited (who, when, which receipts, why) in the transaction that requeues them.
import { recordAudit, type Actor } from "@/lib/admin/audit";
import { Prisma, prisma } from "@/lib/platform/db";
import type { DomainResult } from "@/lib/platform/refusal";
import { OUTBOX_CHANNEL, wake } from "@/lib/pipeline/wake";

export type DeadFilter = { provider?: string; reference?: string; from?: Date; to?: Date };

export type DeadReceipt = {
  id: bigint;
  kind: string;
  provider: string | null;
  reference: string | null;
  amount: string | null;
  currency: string | null;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  deadAt: Date;
};

/** The most a single request may name by id; a filter has no limit. */
export const MAX_IDS = 500;

// The filter reads the receipt's own payload (provider, reference), written by the commit.
function where(tenantId: string, f: DeadFilter): Prisma.Sql {
  const parts = [
    Prisma.sql`tenant_id = ${tenantId}::uuid`,
    Prisma.sql`sent_at IS NULL`,
    Prisma.sql`dead_at IS NOT NULL`,
  ];
  if (f.provider) parts.push(Prisma.sql`payload->>'provider' = ${f.provider}`);
  // A prefix, matched literally: % and _ in what a person typed are not wildcards.
  if (f.reference) parts.push(Prisma.sql`left(payload->>'reference', ${f.reference.length}) = ${f.reference}`);
  if (f.from) parts.push(Prisma.sql`dead_at >= ${f.from}`);
  if (f.to) parts.push(Prisma.sql`dead_at < ${f.to}`);
  return Prisma.join(parts, " AND ");
}

export async function listDeadReceipts(
  tenantId: string,
  f: DeadFilter & { limit?: number; before?: bigint },
): Promise<{ items: DeadReceipt[]; total: number }> {
  const limit = Math.min(f.limit ?? 50, 200);
  const page = f.before ? Prisma.sql` AND id < ${f.before}` : Prisma.empty;
  const [rows, total] = await Promise.all([
    prisma.$queryRaw<
      {
        id: bigint;
        kind: string;
        payload: Record<string, unknown>;
        attempts: number;
        last_error: string | null;
        created_at: Date;
        dead_at: Date;
      }[]
    >(Prisma.sql`
      SELECT id, kind, payload, attempts, last_error, created_at, dead_at FROM outbox
      WHERE ${where(tenantId, f)}${page} ORDER BY id DESC LIMIT ${limit}`),
    countDeadReceipts(tenantId, f),
  ]);
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  return {
    total,
    items: rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      provider: str(r.payload.provider),
      reference: str(r.payload.reference),
      amount: str(r.payload.amount),
      currency: str(r.payload.currency),
      attempts: r.attempts,
      lastError: r.last_error,
      createdAt: r.created_at,
      deadAt: r.dead_at,
    })),
  };
}

/** How many dead receipts a filter matches now: the preview a bulk redelivery confirms against. */
export async function countDeadReceipts(tenantId: string, f: DeadFilter): Promise<number> {
  const [row] = await prisma.$queryRaw<{ n: bigint }[]>(
    Prisma.sql`SELECT count(*) AS n FROM outbox WHERE ${where(tenantId, f)}`,
  );
  return Number(row?.n ?? 0);
}

export type RedeliverRequest =
  | { ids: bigint[]; reason: string }
  /** `expected`: the count the person saw in the preview; if the filter now matches another number, nothing happens. */
  | { filter: DeadFilter; expected: number; reason: string };

export type Redelivered = { redelivered: number; ids: string[] };

export async function redeliverDeadReceipts(
  tenantId: string,
  request: RedeliverRequest,
  actor: Actor,
): Promise<DomainResult<Redelivered>> {
  const result = await prisma.$transaction(async (tx): Promise<DomainResult<Redelivered>> => {
    let scope: Prisma.Sql;
    if ("ids" in request) {
      if (request.ids.length === 0 || request.ids.length > MAX_IDS)
        return {
          ok: false,
          reason: "empty",
          message: `Name between 1 and ${MAX_IDS} receipts, or redeliver by filter`,
        };
      scope = Prisma.sql`${where(tenantId, {})} AND id = ANY(${request.ids.map(String)}::bigint[])`;
    } else {
      // The matching rows are locked first: what is requeued is exactly the set counted,
      // even if the dispatcher kills another receipt meanwhile.
      const locked = await tx.$queryRaw<{ id: bigint }[]>(Prisma.sql`
        SELECT id FROM outbox WHERE ${where(tenantId, request.filter)} ORDER BY id FOR UPDATE`);
      if (locked.length !== request.expected)
        return {
          ok: false,
          reason: "preview_changed",
          message: `The filter matched ${request.expected} dead receipt(s) in your preview and matches ${locked.length} now: preview again before redelivering`,
        };
      scope = Prisma.sql`id = ANY(${locked.map((r) => String(r.id))}::bigint[])`;
    }
    // attempts back to 0: the retry schedule starts again from its first step.
    const rows = await tx.$queryRaw<{ id: bigint }[]>(Prisma.sql`
      UPDATE outbox SET dead_at = NULL, attempts = 0, available_at = now()
      WHERE ${scope} RETURNING id`);
    if (rows.length === 0)
      return {
        ok: false,
        reason: "nothing_to_do",
        message:
          "ids" in request
            ? "None of these receipts is dead in this tenant (delivered since, redelivered already, or not found)"
            : "No dead receipt matches this filter",
      };
    const ids = rows.map((r) => r.id.toString()).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    await recordAudit(tx, {
      actor,
      action: "receipt.redeliver",
      subjectType: "outbox",
      subjectId: ids.length === 1 ? ids[0]! : `${ids.length} receipts`,
      tenantId,
      reason: request.reason,
      details: {
        count: ids.length,
        // The first 100 ids name a bulk request well enough; the filter names the rest.
        ids: ids.slice(0, 100),
        ...("filter" in request ? { filter: request.filter } : {}),
      },
    });
    return { ok: true, value: { redelivered: ids.length, ids } };
  });
  if (result.ok) wake(OUTBOX_CHANNEL);
  return result;
}
