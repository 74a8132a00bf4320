// Reading the books for people: a tenant's accounts with their balances, and
// an account's ledger entries with the posting each belongs to. Read-only.
import { Prisma, prisma } from "@/lib/platform/db";
import type { AccountKind } from "@/lib/generated/prisma/enums";

/**
 * An account's balance per currency: the sum of its slots (a hot account's balance
 * is spread over several rows, see BALANCE_SLOTS), last moved at the latest slot's time.
 * Every read of balances goes through here or sums in SQL (export, invariants).
 */
export function sumSlots<B extends { currency: string; amount: bigint; updatedAt: Date }>(
  rows: B[],
): { currency: string; amount: bigint; updatedAt: Date }[] {
  const byCurrency = new Map<string, { currency: string; amount: bigint; updatedAt: Date }>();
  for (const r of rows) {
    const cur = byCurrency.get(r.currency);
    if (!cur) byCurrency.set(r.currency, { currency: r.currency, amount: r.amount, updatedAt: r.updatedAt });
    else {
      cur.amount += r.amount;
      if (r.updatedAt > cur.updatedAt) cur.updatedAt = r.updatedAt;
    }
  }
  return [...byCurrency.values()].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
}

/** A tenant's balances by account code and currency, slots summed (tests and tools compare ledgers with it). */
export async function balancesByCode(tenantId: string): Promise<{ code: string; currency: string; amount: bigint }[]> {
  const rows = await prisma.$queryRaw<{ code: string; currency: string; amount: bigint }[]>(Prisma.sql`
    SELECT a.code, trim(b.currency) AS currency, sum(b.amount)::bigint AS amount
    FROM balances b JOIN accounts a ON a.id = b.account_id
    WHERE a.tenant_id = ${tenantId}::uuid GROUP BY a.code, b.currency ORDER BY a.code, b.currency`);
  return rows;
}

/** One account's balance in one currency (slots summed); 0 when it never moved. */
export async function balanceOf(tenantId: string, code: string, currency: string): Promise<bigint> {
  const r = await prisma.balance.aggregate({
    where: { account: { tenantId, code }, currency },
    _sum: { amount: true },
  });
  return r._sum.amount ?? 0n;
}

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
  const accounts = rows.slice(0, limit).map((a) => ({ ...a, balances: sumSlots(a.balances) }));
  return { accounts, nextAfter: rows.length > limit ? accounts[accounts.length - 1]!.id : null };
}

export async function getAccount(tenantId: string, id: bigint) {
  const account = await prisma.account.findFirst({
    where: { id, tenantId },
    include: { balances: { orderBy: { currency: "asc" } } },
  });
  return account && { ...account, balances: sumSlots(account.balances) };
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
