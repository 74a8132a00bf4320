// The ledger's invariants, checked from the outside: after every worker test,
// by the replay after every run, and on demand by operators.
import { Prisma, prisma } from "@/lib/platform/db";

export type Violation = { invariant: string; detail: string };

export async function ledgerViolations(tenantId?: string): Promise<Violation[]> {
  const tenant = tenantId ? Prisma.sql`AND p.tenant_id = ${tenantId}::uuid` : Prisma.empty;
  const out: Violation[] = [];
  const unbalanced = await prisma.$queryRaw<{ posting_id: bigint; currency: string; total: bigint }[]>(Prisma.sql`
    SELECT e.posting_id, e.currency, sum(e.amount)::bigint AS total FROM ledger_entries e JOIN postings p ON p.id = e.posting_id
    WHERE true ${tenant} GROUP BY e.posting_id, e.currency HAVING sum(e.amount) <> 0`);
  for (const r of unbalanced)
    out.push({
      invariant: "posting balances to zero per currency",
      detail: `posting ${r.posting_id}: ${r.total} ${r.currency}`,
    });

  const empty = await prisma.$queryRaw<{ id: bigint }[]>(Prisma.sql`
    SELECT p.id FROM postings p WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.posting_id = p.id) ${tenant}`);
  for (const r of empty) out.push({ invariant: "posting has entries", detail: `posting ${r.id} has none` });

  const balances = await prisma.$queryRaw<
    { account_id: bigint; currency: string; balance: bigint; entries: bigint }[]
  >(Prisma.sql`
    WITH sums AS (SELECT e.account_id, e.currency, sum(e.amount)::bigint AS total FROM ledger_entries e GROUP BY 1, 2),
    -- A balance is the sum of its slots (see BALANCE_SLOTS).
    b AS (SELECT account_id, currency, sum(amount)::bigint AS amount FROM balances GROUP BY 1, 2)
    SELECT coalesce(b.account_id, s.account_id) AS account_id, coalesce(b.currency, s.currency) AS currency,
           coalesce(b.amount, 0)::bigint AS balance, coalesce(s.total, 0)::bigint AS entries
    FROM b FULL JOIN sums s ON s.account_id = b.account_id AND s.currency = b.currency
    JOIN accounts a ON a.id = coalesce(b.account_id, s.account_id)
    WHERE coalesce(b.amount, 0) <> coalesce(s.total, 0) ${tenantId ? Prisma.sql`AND a.tenant_id = ${tenantId}::uuid` : Prisma.empty}`);
  for (const r of balances)
    out.push({
      invariant: "balance equals the sum of its entries",
      detail: `account ${r.account_id} ${r.currency}: balance ${r.balance}, entries ${r.entries}`,
    });

  const claims = await prisma.$queryRaw<{ id: bigint; status: string; postings: bigint }[]>(Prisma.sql`
    SELECT c.id, c.status::text, count(p.id) AS postings FROM processed_events c LEFT JOIN postings p ON p.processed_event_id = c.id
    WHERE true ${tenantId ? Prisma.sql`AND c.tenant_id = ${tenantId}::uuid` : Prisma.empty}
    GROUP BY c.id HAVING (c.status = 'DONE') <> (count(p.id) = 1)`);
  for (const r of claims)
    out.push({
      invariant: "a claim is DONE exactly when it has one posting",
      detail: `claim ${r.id} is ${r.status} with ${r.postings} posting(s)`,
    });

  const receipts = await prisma.$queryRaw<{ id: bigint; receipts: bigint }[]>(Prisma.sql`
    SELECT p.id, count(o.id) AS receipts FROM postings p LEFT JOIN outbox o ON o.posting_id = p.id AND o.kind = 'receipt'
    WHERE p.processed_event_id IS NOT NULL ${tenant} GROUP BY p.id HAVING count(o.id) <> 1`);
  for (const r of receipts)
    out.push({
      invariant: "each posted movement queues exactly one receipt",
      detail: `posting ${r.id} has ${r.receipts}`,
    });
  return out;
}
