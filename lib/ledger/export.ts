// The ledger as a canonical document: no database ids or insert times, postings
// and balances in a fixed order, so two exports of the same ledger are equal
// byte for byte (the replay compares them; an auditor can diff them).
import { csvDocument, type CsvCell } from "@/lib/platform/csv-writer";
import { Prisma, prisma } from "@/lib/platform/db";

export type ExportedPosting = {
  provider: string | null;
  reference: string | null;
  kind: string;
  occurredAt: string;
  reverses: string | null;
  legs: { account: string; amount: string; currency: string }[];
};
export type ExportedBalance = { account: string; currency: string; amount: string };
export type LedgerExport = { tenant: string; postings: ExportedPosting[]; balances: ExportedBalance[] };

export async function exportLedger(tenantId: string, slug: string): Promise<LedgerExport> {
  const rows = await prisma.$queryRaw<
    {
      provider: string | null;
      reference: string | null;
      kind: string;
      occurred_at: Date;
      reverses: string | null;
      legs: { account: string; amount: string; currency: string }[];
    }[]
  >(Prisma.sql`
    SELECT * FROM (
      SELECT p.provider::text, p.provider_reference AS reference, p.kind::text, p.occurred_at,
             r.provider_reference || '/' || r.kind::text AS reverses,
             (SELECT json_agg(json_build_object('account', a.code, 'amount', e.amount::text, 'currency', e.currency) ORDER BY a.code, e.currency, e.amount)
                FROM ledger_entries e JOIN accounts a ON a.id = e.account_id WHERE e.posting_id = p.id) AS legs
      FROM postings p LEFT JOIN postings r ON r.id = p.reverses_posting_id
      WHERE p.tenant_id = ${tenantId}::uuid) x
    ORDER BY provider NULLS FIRST, reference NULLS FIRST, kind, occurred_at, legs::text`);
  // A balance is the sum of its slots (see BALANCE_SLOTS).
  const balances = await prisma.$queryRaw<{ account: string; currency: string; amount: string }[]>(Prisma.sql`
    SELECT a.code AS account, b.currency, sum(b.amount)::text AS amount FROM balances b JOIN accounts a ON a.id = b.account_id
    WHERE a.tenant_id = ${tenantId}::uuid GROUP BY a.code, b.currency HAVING sum(b.amount) <> 0 ORDER BY a.code, b.currency`);
  return {
    tenant: slug,
    postings: rows.map((r) => ({
      provider: r.provider,
      reference: r.reference,
      kind: r.kind,
      occurredAt: r.occurred_at.toISOString(),
      reverses: r.reverses,
      legs: r.legs,
    })),
    balances,
  };
}

export function ledgerJson(e: LedgerExport): string {
  return `${JSON.stringify(e, null, 1)}\n`;
}

/** One row per leg; balances follow as rows of kind BALANCE. Amounts are numeric cells, the rest text (formula-escaped). */
export function ledgerCsv(e: LedgerExport): string {
  const header = [
    "tenant",
    "kind",
    "provider",
    "reference",
    "occurred_at",
    "reverses",
    "account",
    "currency",
    "amount",
  ];
  function* rows(): Generator<CsvCell[]> {
    for (const p of e.postings)
      for (const l of p.legs)
        yield [
          e.tenant,
          p.kind,
          p.provider,
          p.reference,
          p.occurredAt,
          p.reverses,
          l.account,
          l.currency,
          BigInt(l.amount),
        ];
    for (const b of e.balances)
      yield [e.tenant, "BALANCE", null, null, null, null, b.account, b.currency, BigInt(b.amount)];
  }
  return csvDocument(header, rows());
}
