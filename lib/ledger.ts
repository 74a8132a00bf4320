// The double-entry ledger: balanced postings, their entries, and the balances
// they move, always written together in the caller's transaction.
import { Prisma, type Tx } from "@/lib/db";
import type { AccountKind, PostingKind, Provider } from "@/lib/generated/prisma/enums";

/** Debits positive, credits negative; a posting's legs sum to zero per currency. */
export type Leg = { accountId: bigint; amount: bigint; currency: string };

export type NewPosting = {
  tenantId: string;
  kind: PostingKind;
  processedEventId?: bigint;
  provider?: Provider;
  providerReference?: string;
  reversesPostingId?: bigint;
  description: string;
  occurredAt: Date;
  legs: Leg[];
};

export const customerAccountCode = (ref: string) => `customer:${ref}`;
export const clearingAccountCode = (provider: Provider) => `clearing:${provider}`;
/** Payments whose payload names no customer: credited here, visibly, rather than dropped. */
export const UNALLOCATED_ACCOUNT = "customer:(unallocated)";

/**
 * The account with this code, created on first use. ON CONFLICT because two
 * workers may post a new customer's first payments at the same moment.
 */
export async function ensureAccount(tx: Tx, tenantId: string, code: string, kind: AccountKind): Promise<bigint> {
  const rows = await tx.$queryRaw<{ id: bigint }[]>(Prisma.sql`
    INSERT INTO accounts (tenant_id, code, kind) VALUES (${tenantId}::uuid, ${code}, ${kind}::"AccountKind")
    ON CONFLICT (tenant_id, code) DO UPDATE SET code = EXCLUDED.code
    RETURNING id`);
  return rows[0]!.id;
}

export function assertBalanced(legs: Leg[]): void {
  const sums = new Map<string, bigint>();
  for (const leg of legs) {
    if (leg.amount === 0n) throw new Error("a ledger leg cannot be zero");
    sums.set(leg.currency, (sums.get(leg.currency) ?? 0n) + leg.amount);
  }
  for (const [currency, sum] of sums) if (sum !== 0n) throw new Error(`posting does not balance: ${sum} ${currency} left over`);
}

/**
 * Writes the posting, its entries and the balance changes. The database
 * re-checks the balance at commit (a deferred trigger), so a bug here cannot
 * leave money unaccounted for.
 */
export async function writePosting(tx: Tx, p: NewPosting): Promise<bigint> {
  assertBalanced(p.legs);
  const posting = await tx.posting.create({
    data: {
      tenantId: p.tenantId,
      kind: p.kind,
      processedEventId: p.processedEventId ?? null,
      provider: p.provider ?? null,
      providerReference: p.providerReference ?? null,
      reversesPostingId: p.reversesPostingId ?? null,
      description: p.description,
      occurredAt: p.occurredAt,
      entries: { create: p.legs.map((l) => ({ accountId: l.accountId, amount: l.amount, currency: l.currency })) },
    },
    select: { id: true },
  });
  // Accounts in a fixed order, so two postings touching the same pair cannot deadlock.
  const legs = [...p.legs].sort((a, b) => (a.accountId === b.accountId ? a.currency.localeCompare(b.currency) : a.accountId < b.accountId ? -1 : 1));
  for (const leg of legs) {
    await tx.$executeRaw(Prisma.sql`
      INSERT INTO balances (account_id, currency, amount, updated_at) VALUES (${leg.accountId}, ${leg.currency}, ${leg.amount}, now())
      ON CONFLICT (account_id, currency) DO UPDATE SET amount = balances.amount + EXCLUDED.amount, updated_at = now()`);
  }
  return posting.id;
}
