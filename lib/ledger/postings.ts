// The double-entry ledger: balanced postings, their entries, and the balances
// they move, always written together in the caller's transaction.
import { Prisma, type Tx } from "@/lib/platform/db";
import type { AccountKind, PostingKind, Provider } from "@/lib/generated/prisma/enums";

/**
 * Rows a hot account's balance is spread over (balances.slot; the migration allows
 * up to 64). With one row, every commit of a tenant and provider queued on the
 * clearing balance's lock until the previous commit's WAL flush: pgbench here, 16
 * clients, 410 tx/s touching one shared row against 1,650 touching none.
 * Readers sum the slots (lib/ledger/accounts.ts).
 */
export const BALANCE_SLOTS = 16;

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

// Account ids never change and accounts are never deleted, so a committed one
// can be remembered. Only rows that already existed are cached: one created in
// this transaction would vanish if the transaction rolled back.
const knownAccounts = new Map<string, bigint>();

/**
 * The account with this code, created on first use. ON CONFLICT DO NOTHING, not
 * DO UPDATE: updating the existing row would lock it FOR UPDATE, which collides
 * with the key-share locks other postings' foreign keys take on it (a deadlock
 * seen under the replay with commits running side by side).
 */
export async function ensureAccount(tx: Tx, tenantId: string, code: string, kind: AccountKind): Promise<bigint> {
  const key = `${tenantId}|${code}`;
  const known = knownAccounts.get(key);
  if (known !== undefined) return known;
  const inserted = await tx.$queryRaw<{ id: bigint }[]>(Prisma.sql`
    INSERT INTO accounts (tenant_id, code, kind) VALUES (${tenantId}::uuid, ${code}, ${kind}::"AccountKind")
    ON CONFLICT (tenant_id, code) DO NOTHING RETURNING id`);
  if (inserted[0]) return inserted[0].id;
  const [existing] = await tx.$queryRaw<{ id: bigint }[]>(
    Prisma.sql`SELECT id FROM accounts WHERE tenant_id = ${tenantId}::uuid AND code = ${code}`,
  );
  knownAccounts.set(key, existing!.id);
  return existing!.id;
}

/**
 * Several accounts in one statement, created in code order (two transactions creating
 * overlapping sets wait for each other instead of deadlocking). Keyed `tenant|code`.
 * Rows created here are not remembered process-wide (the transaction may roll back);
 * rows that existed before are.
 */
export async function ensureAccounts(
  tx: Tx,
  wanted: { tenantId: string; code: string; kind: AccountKind }[],
): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  const missing = wanted.filter((w) => {
    const known = knownAccounts.get(`${w.tenantId}|${w.code}`);
    if (known !== undefined) out.set(`${w.tenantId}|${w.code}`, known);
    return known === undefined;
  });
  if (missing.length === 0) return out;
  const sorted = [...missing].sort((a, b) => (`${a.tenantId}|${a.code}` < `${b.tenantId}|${b.code}` ? -1 : 1));
  const args = Prisma.sql`unnest(${sorted.map((w) => w.tenantId)}::uuid[], ${sorted.map((w) => w.code)}::text[], ${sorted.map((w) => w.kind)}::"AccountKind"[]) WITH ORDINALITY AS w(tenant_id, code, kind, n)`;
  // The inserted rows, and (same snapshot) the ones committed before this statement.
  const rows = await tx.$queryRaw<{ tenant_id: string; code: string; id: bigint; created: boolean }[]>(Prisma.sql`
    WITH ins AS (
      INSERT INTO accounts (tenant_id, code, kind) SELECT tenant_id, code, kind FROM ${args} ORDER BY n
      ON CONFLICT (tenant_id, code) DO NOTHING RETURNING tenant_id, code, id)
    SELECT tenant_id::text, code, id, true AS created FROM ins
    UNION ALL
    SELECT a.tenant_id::text, a.code, a.id, false FROM accounts a JOIN ${args} ON a.tenant_id = w.tenant_id AND a.code = w.code`);
  for (const r of rows) {
    const key = `${r.tenant_id}|${r.code}`;
    if (!r.created) knownAccounts.set(key, r.id);
    out.set(key, r.id);
  }
  // Created by a transaction that committed while this statement waited on it: read it now.
  for (const w of missing)
    if (!out.has(`${w.tenantId}|${w.code}`))
      out.set(`${w.tenantId}|${w.code}`, await ensureAccount(tx, w.tenantId, w.code, w.kind));
  return out;
}

export function assertBalanced(legs: Leg[]): void {
  const sums = new Map<string, bigint>();
  for (const leg of legs) {
    if (leg.amount === 0n) throw new Error("a ledger leg cannot be zero");
    sums.set(leg.currency, (sums.get(leg.currency) ?? 0n) + leg.amount);
  }
  for (const [currency, sum] of sums)
    if (sum !== 0n) throw new Error(`posting does not balance: ${sum} ${currency} left over`);
}

/**
 * Writes the posting, its entries and the balance changes. The database
 * re-checks the balance at commit (a deferred trigger), so a bug here cannot
 * leave money unaccounted for.
 */
export async function writePosting(tx: Tx, p: NewPosting): Promise<bigint> {
  assertBalanced(p.legs);
  const [posting] = await tx.$queryRaw<{ id: bigint }[]>(Prisma.sql`
    INSERT INTO postings (tenant_id, kind, processed_event_id, provider, provider_reference, reverses_posting_id, description, occurred_at)
    VALUES (${p.tenantId}::uuid, ${p.kind}::"PostingKind", ${p.processedEventId ?? null}::bigint, ${p.provider ?? null}::"Provider",
            ${p.providerReference ?? null}, ${p.reversesPostingId ?? null}::bigint, ${p.description}, ${p.occurredAt})
    RETURNING id`);
  const postingId = posting!.id;
  await tx.$executeRaw(Prisma.sql`
    INSERT INTO ledger_entries (posting_id, account_id, amount, currency)
    SELECT ${postingId}, * FROM unnest(${p.legs.map((l) => l.accountId.toString())}::bigint[], ${p.legs.map((l) => l.amount.toString())}::bigint[], ${p.legs.map((l) => l.currency)}::text[])`);
  // One row per account and currency, in a fixed order, so two postings touching
  // the same accounts wait for each other instead of deadlocking.
  const net = new Map<string, { accountId: bigint; currency: string; amount: bigint }>();
  for (const l of p.legs) {
    const k = `${l.accountId}|${l.currency}`;
    const cur = net.get(k);
    if (cur) cur.amount += l.amount;
    else net.set(k, { ...l });
  }
  const rows = [...net.values()].sort((a, b) =>
    a.accountId === b.accountId ? a.currency.localeCompare(b.currency) : a.accountId < b.accountId ? -1 : 1,
  );
  await tx.$executeRaw(Prisma.sql`
    INSERT INTO balances (account_id, currency, amount, updated_at)
    SELECT a, c, m, now() FROM unnest(${rows.map((r) => r.accountId.toString())}::bigint[], ${rows.map((r) => r.currency)}::text[], ${rows.map((r) => r.amount.toString())}::bigint[]) AS v(a, c, m)
    ON CONFLICT (account_id, currency, slot) DO UPDATE SET amount = balances.amount + EXCLUDED.amount, updated_at = now()`);
  return postingId;
}
