// Reading bank statements for people: the list (what each file held and how much
// of it matched), one statement with the runs its import made, and its lines with
// their match: which payouts a credit settled and by which rule, or why it is
// unmatched, and the case it became.
import { Prisma, prisma } from "@/lib/platform/db";

export type StatementRow = {
  id: bigint;
  format: string;
  sourceName: string | null;
  account: string;
  currency: string | null;
  fromDate: Date | null;
  toDate: Date | null;
  lines: number;
  skipped: number;
  credits: number;
  debits: number;
  matched: number;
  unmatchedCredits: number;
  actorLabel: string;
  importedAt: Date;
};

export async function listStatements(
  tenantId: string,
  o: { limit?: number; beforeId?: bigint; id?: bigint } = {},
): Promise<{ statements: StatementRow[]; nextBefore: bigint | null }> {
  const limit = Math.min(o.limit ?? 25, 100);
  // The counts read each statement's lines by (tenant_id, statement_id): the unique key's prefix.
  const rows = await prisma.$queryRaw<
    (Omit<StatementRow, "credits" | "debits" | "matched" | "unmatchedCredits"> & Record<string, number>)[]
  >(Prisma.sql`
    SELECT s.id, s.format, s.source_name AS "sourceName", s.account, s.currency, s.from_date AS "fromDate", s.to_date AS "toDate",
      s.lines, s.skipped_entries AS skipped, s.actor_label AS "actorLabel", s.imported_at AS "importedAt",
      count(l.id) FILTER (WHERE l.amount > 0)::int AS credits,
      count(l.id) FILTER (WHERE l.amount < 0)::int AS debits,
      count(l.id) FILTER (WHERE l.matched_at IS NOT NULL)::int AS matched,
      count(l.id) FILTER (WHERE l.amount > 0 AND l.matched_at IS NULL AND NOT l.reversal)::int AS "unmatchedCredits"
    FROM bank_statements s LEFT JOIN bank_lines l ON l.tenant_id = s.tenant_id AND l.statement_id = s.id
    WHERE s.tenant_id = ${tenantId}::uuid ${o.beforeId ? Prisma.sql`AND s.id < ${o.beforeId}` : Prisma.empty}
      ${o.id ? Prisma.sql`AND s.id = ${o.id}` : Prisma.empty}
    GROUP BY s.id ORDER BY s.id DESC LIMIT ${limit + 1}`);
  const statements = rows
    .slice(0, limit)
    .map((r) => ({ ...r, currency: r.currency?.trim() ?? null })) as StatementRow[];
  return { statements, nextBefore: rows.length > limit ? statements[statements.length - 1]!.id : null };
}

export type StatementPage = Awaited<ReturnType<typeof listStatements>>;

/** A statement with the reconciliation runs its import made (one per provider it concerned). */
export async function getStatement(tenantId: string, id: bigint) {
  const [statement] = (await listStatements(tenantId, { id, limit: 1 })).statements;
  if (!statement) return null;
  const runs = await prisma.reconRun.findMany({
    where: { tenantId, source: "BANK", sourceName: { startsWith: `bank statement #${id} (` } },
    orderBy: { provider: "asc" },
    select: {
      id: true,
      provider: true,
      compared: true,
      matched: true,
      withinTolerance: true,
      oursNotTheirs: true,
      theirsNotOurs: true,
      rules: true,
    },
  });
  return { statement, runs };
}

export const LINE_FILTERS = ["all", "credits", "unmatched", "matched"] as const;
export type LineFilter = (typeof LINE_FILTERS)[number];

/** A statement's lines in file order (from after `afterRow`), each with what it matched or why not; null for no such statement. */
export async function statementLines(
  tenantId: string,
  statementId: bigint,
  o: { filter?: LineFilter; afterRow?: number; limit?: number } = {},
) {
  const limit = Math.min(o.limit ?? 200, 1000);
  const filter = o.filter ?? "all";
  if (!(await prisma.bankStatement.findFirst({ where: { id: statementId, tenantId }, select: { id: true } })))
    return null;
  const lines = await prisma.bankLine.findMany({
    where: {
      tenantId,
      statementId,
      ...(o.afterRow !== undefined && { rowNo: { gt: o.afterRow } }),
      ...(filter === "credits" && { amount: { gt: 0n } }),
      ...(filter === "unmatched" && { amount: { gt: 0n }, matchedAt: null, reversal: false }),
      ...(filter === "matched" && { matchedAt: { not: null } }),
    },
    orderBy: { rowNo: "asc" },
    take: limit + 1,
  });
  const page = lines.slice(0, limit);
  const ids = page.map((l) => l.id);
  const [payouts, discrepancies] = await Promise.all([
    prisma.payout.findMany({
      where: { tenantId, bankLineId: { in: ids } },
      select: {
        id: true,
        provider: true,
        reference: true,
        currency: true,
        ourAmount: true,
        theirAmount: true,
        arrivalDate: true,
        bankLineId: true,
      },
      orderBy: { id: "asc" },
    }),
    ids.length
      ? prisma.$queryRaw<
          { id: bigint; lineId: string; state: string; caseId: bigint | null; caseStatus: string | null }[]
        >(Prisma.sql`
          SELECT d.id, d.their_line->>'bankLineId' AS "lineId", d.state::text AS state, c.id AS "caseId", c.status::text AS "caseStatus"
          FROM recon_discrepancies d LEFT JOIN cases c ON c.discrepancy_id = d.id
          WHERE d.tenant_id = ${tenantId}::uuid AND d.bucket = 'BANK_UNMATCHED' AND d.their_line->>'bankLineId' = ANY(${ids.map(String)}::text[])`)
      : [],
  ]);
  return {
    lines: page.map((l) => ({
      ...l,
      currency: l.currency.trim(),
      payouts: payouts
        .filter((p) => p.bankLineId === l.id)
        .map(({ bankLineId: _, ...p }) => ({
          ...p,
          currency: p.currency.trim(),
          amount: p.theirAmount ?? p.ourAmount,
        })),
      discrepancy: discrepancies.find((d) => d.lineId === String(l.id)) ?? null,
    })),
    nextAfter: lines.length > limit ? page[page.length - 1]!.rowNo : null,
  };
}

export type LinePage = NonNullable<Awaited<ReturnType<typeof statementLines>>>;
