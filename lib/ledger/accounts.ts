// Reading the books for people: a tenant's accounts with their balances, and
// an account's ledger entries with the posting each belongs to. Read-only.
import { prisma } from "@/lib/platform/db";
import type { AccountKind } from "@/lib/generated/prisma/enums";

export type AccountFilter = { tenantId: string; kind?: AccountKind; code?: string; limit?: number; afterId?: bigint };

export async function listAccounts(filter: AccountFilter) {
  const limit = Math.min(filter.limit ?? 100, 500);
  const rows = await prisma.account.findMany({
    where: {
      tenantId: filter.tenantId,
      ...(filter.kind && { kind: filter.kind }),
      ...(filter.code && { code: { contains: filter.code, mode: "insensitive" as const } }),
      ...(filter.afterId && { id: { gt: filter.afterId } }),
    },
    orderBy: { id: "asc" },
    take: limit + 1,
    include: { balances: { orderBy: { currency: "asc" }, select: { currency: true, amount: true, updatedAt: true } } },
  });
  const accounts = rows.slice(0, limit);
  return { accounts, nextAfter: rows.length > limit ? accounts[accounts.length - 1]!.id : null };
}

export async function getAccount(tenantId: string, id: bigint) {
  return prisma.account.findFirst({ where: { id, tenantId }, include: { balances: { orderBy: { currency: "asc" } } } });
}

/** An account's entries, newest first, each with its posting. */
export async function listEntries(accountId: bigint, options: { limit?: number; beforeId?: bigint } = {}) {
  const limit = Math.min(options.limit ?? 50, 500);
  const rows = await prisma.ledgerEntry.findMany({
    where: { accountId, ...(options.beforeId && { id: { lt: options.beforeId } }) },
    orderBy: { id: "desc" },
    take: limit + 1,
    include: {
      posting: {
        select: {
          id: true,
          kind: true,
          description: true,
          occurredAt: true,
          createdAt: true,
          provider: true,
          providerReference: true,
          processedEventId: true,
          reversesPostingId: true,
          processedEvent: { select: { rawEventId: true } },
        },
      },
    },
  });
  const entries = rows.slice(0, limit);
  return { entries, nextBefore: rows.length > limit ? entries[entries.length - 1]!.id : null };
}
