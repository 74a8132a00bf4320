// Step 6 to the payout: the money that reaches the bank is a payout, the net of
// the lines it pays out. For every payout, gross − refunds − fees − disputes ±
// adjustments = net = payout amount, computed twice, side by side: from the
// provider's settlement lines (payout_lines, kept from each run) and from our
// ledger (the postings of the same references, and their fees). A payout whose
// lines do not add up to it is a case (PAYOUT_RESIDUAL) carrying its statement and
// lines; a later run that finds it balanced closes it.
import type { PoolClient } from "pg";
import { closeCasesOfResolved } from "@/lib/recon/recheck";
import { Prisma, prisma } from "@/lib/platform/db";
import type { PayoutStatus, Provider } from "@/lib/generated/prisma/enums";

/** One side of a payout's statement, signed as the provider's balance moved (minor units). */
export type StatementSide = {
  gross: bigint;
  refunds: bigint;
  fees: bigint;
  disputes: bigint;
  adjustments: bigint;
  /** gross + refunds + fees + disputes + adjustments: what the payout should be. */
  net: bigint;
  /** The payout's amount as this side states it; null when this side has not seen it. */
  payout: bigint | null;
  /** payout − net: zero when the statement balances; null without a payout amount. */
  residual: bigint | null;
};

export type PayoutStatement = {
  id: bigint;
  reference: string;
  provider: Provider;
  currency: string;
  status: PayoutStatus;
  arrivalDate: Date | null;
  destination: string | null;
  /** The text the provider says its transfer carries to the bank, when that is not the reference. */
  bankReference: string | null;
  bankLineId: bigint | null;
  lines: number;
  theirs: StatementSide;
  ours: StatementSide;
};

type StatementRow = {
  id: bigint;
  reference: string;
  provider: Provider;
  currency: string;
  status: PayoutStatus;
  arrival_date: Date | null;
  destination: string | null;
  bank_reference: string | null;
  bank_line_id: bigint | null;
  our_amount: bigint | null;
  their_amount: bigint | null;
  lines: number;
  t_gross: bigint;
  t_refunds: bigint;
  t_fees: bigint;
  t_disputes: bigint;
  t_adjustments: bigint;
  o_gross: bigint;
  o_refunds: bigint;
  o_fees: bigint;
  o_disputes: bigint;
  o_adjustments: bigint;
};

/**
 * The statements of a tenant's payouts, by reference (all of a provider's when
 * `references` is null), in one statement. Ours counts, for every reference the
 * provider's lines name, the clearing legs of our postings of it and of its fee
 * (reference + ":fee"), in the payout's currency, corrections included: what our
 * ledger says moved for those lines. The provider's fees are each line's fee plus
 * its fee lines.
 */
function statementSql(
  tenantId: string,
  provider: Provider,
  references: string[] | null,
  o: { ours: boolean } = { ours: true },
): Prisma.Sql {
  const which = references ? Prisma.sql`AND reference = ANY(${references}::text[])` : Prisma.empty;
  const lineWhich = references ? Prisma.sql`AND payout_reference = ANY(${references}::text[])` : Prisma.empty;
  return Prisma.sql`
    WITH p AS (SELECT * FROM payouts WHERE tenant_id = ${tenantId}::uuid AND provider = ${provider}::"Provider" ${which}),
    l AS (
      SELECT payout_reference, reference, kind::text AS kind, gross, fee FROM payout_lines
      WHERE tenant_id = ${tenantId}::uuid AND provider = ${provider}::"Provider" ${lineWhich} AND kind NOT IN ('PAYOUT', 'PAYOUT_FAILED')),
    theirs AS (
      SELECT payout_reference, count(*)::int AS lines,
        coalesce(sum(gross) FILTER (WHERE kind = 'PAYMENT'), 0)::bigint AS gross,
        coalesce(sum(gross) FILTER (WHERE kind = 'REFUND'), 0)::bigint AS refunds,
        (coalesce(sum(gross) FILTER (WHERE kind = 'FEE'), 0) - sum(fee))::bigint AS fees,
        coalesce(sum(gross) FILTER (WHERE kind IN ('DISPUTE', 'DISPUTE_REVERSAL')), 0)::bigint AS disputes,
        coalesce(sum(gross) FILTER (WHERE kind = 'ADJUSTMENT'), 0)::bigint AS adjustments
      FROM l GROUP BY payout_reference),
    refs AS (
      SELECT payout_reference, reference, min(kind) AS kind FROM l WHERE ${o.ours} GROUP BY 1, 2
      UNION SELECT DISTINCT payout_reference, reference || ':fee', 'FEE' FROM l WHERE ${o.ours} AND kind <> 'FEE'),
    ours AS (
      SELECT r.payout_reference,
        coalesce(sum(e.amount) FILTER (WHERE r.kind = 'PAYMENT'), 0)::bigint AS gross,
        coalesce(sum(e.amount) FILTER (WHERE r.kind = 'REFUND'), 0)::bigint AS refunds,
        coalesce(sum(e.amount) FILTER (WHERE r.kind = 'FEE'), 0)::bigint AS fees,
        coalesce(sum(e.amount) FILTER (WHERE r.kind IN ('DISPUTE', 'DISPUTE_REVERSAL')), 0)::bigint AS disputes,
        coalesce(sum(e.amount) FILTER (WHERE r.kind = 'ADJUSTMENT'), 0)::bigint AS adjustments
      FROM refs r
      JOIN p ON p.reference = r.payout_reference
      JOIN postings po ON po.tenant_id = ${tenantId}::uuid AND po.provider = ${provider}::"Provider" AND po.provider_reference = r.reference
      JOIN ledger_entries e ON e.posting_id = po.id AND e.currency = p.currency
      JOIN accounts a ON a.id = e.account_id AND a.kind = 'PROVIDER_CLEARING'
      GROUP BY r.payout_reference)
    SELECT p.id, p.reference, p.provider, trim(p.currency) AS currency, p.status, p.arrival_date, p.destination, p.bank_reference, p.bank_line_id,
           p.our_amount, p.their_amount, coalesce(t.lines, 0) AS lines,
           coalesce(t.gross, 0)::bigint AS t_gross, coalesce(t.refunds, 0)::bigint AS t_refunds, coalesce(t.fees, 0)::bigint AS t_fees,
           coalesce(t.disputes, 0)::bigint AS t_disputes, coalesce(t.adjustments, 0)::bigint AS t_adjustments,
           coalesce(o.gross, 0)::bigint AS o_gross, coalesce(o.refunds, 0)::bigint AS o_refunds, coalesce(o.fees, 0)::bigint AS o_fees,
           coalesce(o.disputes, 0)::bigint AS o_disputes, coalesce(o.adjustments, 0)::bigint AS o_adjustments
    FROM p LEFT JOIN theirs t ON t.payout_reference = p.reference LEFT JOIN ours o ON o.payout_reference = p.reference
    ORDER BY p.arrival_date NULLS LAST, p.reference`;
}

function side(
  gross: bigint,
  refunds: bigint,
  fees: bigint,
  disputes: bigint,
  adjustments: bigint,
  payout: bigint | null,
): StatementSide {
  const net = gross + refunds + fees + disputes + adjustments;
  return { gross, refunds, fees, disputes, adjustments, net, payout, residual: payout === null ? null : payout - net };
}

function toStatement(r: StatementRow): PayoutStatement {
  return {
    id: r.id,
    reference: r.reference,
    provider: r.provider,
    currency: r.currency,
    status: r.status,
    arrivalDate: r.arrival_date,
    destination: r.destination,
    bankReference: r.bank_reference,
    bankLineId: r.bank_line_id,
    lines: r.lines,
    theirs: side(r.t_gross, r.t_refunds, r.t_fees, r.t_disputes, r.t_adjustments, r.their_amount),
    ours: side(r.o_gross, r.o_refunds, r.o_fees, r.o_disputes, r.o_adjustments, r.our_amount),
  };
}

export async function payoutStatements(
  tenantId: string,
  provider: Provider,
  references: string[] | null = null,
): Promise<PayoutStatement[]> {
  const rows = await prisma.$queryRaw<StatementRow[]>(statementSql(tenantId, provider, references));
  return rows.map(toStatement);
}

export type PayoutLineView = {
  lineId: string;
  reference: string;
  kind: string;
  occurredAt: Date;
  currency: string;
  theirGross: bigint;
  theirFee: bigint;
  /** Our clearing legs for the reference and for its fee, in the line's currency. */
  ourGross: bigint;
  ourFee: bigint;
  agrees: boolean;
};

/** One payout: its statement and every line, theirs beside ours. */
export async function getPayout(tenantId: string, provider: Provider, reference: string) {
  const [statement] = await payoutStatements(tenantId, provider, [reference]);
  if (!statement) return null;
  const lines = await prisma.$queryRaw<
    {
      line_id: string;
      reference: string;
      kind: string;
      occurred_at: Date;
      currency: string;
      gross: bigint;
      fee: bigint;
      our_gross: bigint;
      our_fee: bigint;
    }[]
  >(Prisma.sql`
    WITH l AS (
      SELECT line_id, reference, kind::text AS kind, occurred_at, trim(currency) AS currency, gross, fee FROM payout_lines
      WHERE tenant_id = ${tenantId}::uuid AND provider = ${provider}::"Provider" AND payout_reference = ${reference}
        -- The payout's own line is its amount, shown in the statement.
        AND kind NOT IN ('PAYOUT', 'PAYOUT_FAILED'))
    SELECT l.*,
      coalesce((SELECT sum(e.amount) FROM postings po JOIN ledger_entries e ON e.posting_id = po.id AND e.currency = l.currency
                JOIN accounts a ON a.id = e.account_id AND a.kind = 'PROVIDER_CLEARING'
                WHERE po.tenant_id = ${tenantId}::uuid AND po.provider = ${provider}::"Provider" AND po.provider_reference = l.reference), 0)::bigint AS our_gross,
      coalesce((SELECT sum(e.amount) FROM postings po JOIN ledger_entries e ON e.posting_id = po.id AND e.currency = l.currency
                JOIN accounts a ON a.id = e.account_id AND a.kind = 'PROVIDER_CLEARING'
                WHERE po.tenant_id = ${tenantId}::uuid AND po.provider = ${provider}::"Provider" AND po.provider_reference = l.reference || ':fee'), 0)::bigint AS our_fee
    FROM l ORDER BY l.occurred_at, l.line_id`);
  return {
    statement,
    lines: lines.map(
      (l): PayoutLineView => ({
        lineId: l.line_id,
        reference: l.reference,
        kind: l.kind,
        occurredAt: l.occurred_at,
        currency: l.currency,
        theirGross: l.gross,
        theirFee: l.fee,
        ourGross: l.our_gross,
        // Our fee leg is minus the fee on the clearing account; shown as the fee.
        ourFee: -l.our_fee,
        agrees: l.gross === l.our_gross && l.fee === -l.our_fee,
      }),
    ),
  };
}

/** getPayout by the payout row's id (the page's and the API's address for it). */
export async function getPayoutById(tenantId: string, id: bigint) {
  const row = await prisma.payout.findFirst({ where: { id, tenantId }, select: { provider: true, reference: true } });
  if (!row) return null;
  const found = await getPayout(tenantId, row.provider, row.reference);
  return found && { id, ...found };
}

export type PayoutFilter = { tenantId: string; provider?: Provider; status?: PayoutStatus; limit?: number };

/** A tenant's payouts, newest first, each with its statement's residuals. */
export async function listPayouts(filter: PayoutFilter): Promise<PayoutStatement[]> {
  const providers = filter.provider
    ? [filter.provider]
    : (
        await prisma.payout.findMany({
          where: { tenantId: filter.tenantId },
          distinct: ["provider"],
          select: { provider: true },
        })
      ).map((p) => p.provider);
  const all = (await Promise.all(providers.map((p) => payoutStatements(filter.tenantId, p)))).flat();
  return all
    .filter((s) => !filter.status || s.status === filter.status)
    .sort(
      (a, b) =>
        (b.arrivalDate?.getTime() ?? 0) - (a.arrivalDate?.getTime() ?? 0) || (a.reference < b.reference ? 1 : -1),
    )
    .slice(0, Math.min(filter.limit ?? 200, 1000));
}

const STATEMENT_HEADER = [
  "payout",
  "provider",
  "currency",
  "status",
  "arrival_date",
  "side",
  "gross",
  "refunds",
  "fees",
  "disputes",
  "adjustments",
  "net",
  "payout_amount",
  "residual",
];

/** The statement as CSV rows (header first): one row per side, minor units. */
export function statementCsvRows(statements: PayoutStatement[]): string[][] {
  const rows = [STATEMENT_HEADER];
  for (const s of statements)
    for (const [name, v] of [
      ["provider", s.theirs],
      ["ledger", s.ours],
    ] as const)
      rows.push([
        s.reference,
        s.provider,
        s.currency,
        s.status,
        s.arrivalDate?.toISOString().slice(0, 10) ?? "",
        name,
        String(v.gross),
        String(v.refunds),
        String(v.fees),
        String(v.disputes),
        String(v.adjustments),
        String(v.net),
        v.payout === null ? "" : String(v.payout),
        v.residual === null ? "" : String(v.residual),
      ]);
  return rows;
}

/**
 * In a reconciliation run's transaction: keep the report's lines that belong to a
 * payout (payout_lines, by the provider's line id, so a line seen again is updated,
 * not doubled), record each payout's amount as the provider states it, and judge the
 * statement of every payout the report touched by the provider's side: its lines
 * against its amount. A residual opens a PAYOUT_RESIDUAL discrepancy and case with the
 * statement and the lines as evidence; a balanced payout closes an earlier one.
 */
export async function reconcilePayouts(
  client: PoolClient,
  tenantId: string,
  provider: Provider,
  runId: bigint,
): Promise<{ payouts: number; residuals: number }> {
  await client.query(
    `INSERT INTO payout_lines (tenant_id, provider, payout_reference, line_id, reference, kind, gross, fee, currency, occurred_at, run_id, row_no, raw)
     SELECT DISTINCT ON (line_id) $1::uuid, $2::"Provider", payout, line_id, reference, kind::"PostingKind", settled_gross, fee, settled_currency, occurred_at, $3, row_no, raw
     FROM recon_lines WHERE payout IS NOT NULL AND line_id IS NOT NULL AND kind <> 'OTHER'
     ORDER BY line_id, row_no
     ON CONFLICT (tenant_id, provider, line_id) DO UPDATE SET payout_reference = EXCLUDED.payout_reference, reference = EXCLUDED.reference,
       kind = EXCLUDED.kind, gross = EXCLUDED.gross, fee = EXCLUDED.fee, currency = EXCLUDED.currency, occurred_at = EXCLUDED.occurred_at,
       run_id = EXCLUDED.run_id, row_no = EXCLUDED.row_no, raw = EXCLUDED.raw`,
    [tenantId, provider, runId],
  );
  await client.query(
    `INSERT INTO payouts (tenant_id, provider, reference, currency, their_amount, destination, arrival_date, bank_reference)
     SELECT $1::uuid, $2::"Provider", reference, min(settled_currency), -sum(settled_gross), min(account), min(arrival_date), min(bank_reference)
     FROM recon_lines
     WHERE kind = 'PAYOUT' GROUP BY reference HAVING sum(settled_gross) < 0 AND min(settled_currency) = max(settled_currency)
     -- The webhook's destination, arrival day and bank reference, when one came, stand; the settlement's fill what it left empty.
     ON CONFLICT (tenant_id, provider, reference) DO UPDATE SET their_amount = EXCLUDED.their_amount,
       destination = coalesce(payouts.destination, EXCLUDED.destination), arrival_date = coalesce(payouts.arrival_date, EXCLUDED.arrival_date),
       bank_reference = coalesce(payouts.bank_reference, EXCLUDED.bank_reference), updated_at = now()`,
    [tenantId, provider],
  );
  const touched = (
    await client.query<{ payout: string }>(`SELECT DISTINCT payout FROM recon_lines WHERE payout IS NOT NULL`)
  ).rows.map((r) => r.payout);
  if (touched.length === 0) return { payouts: 0, residuals: 0 };

  // Judged by the provider's side alone: our side is read when the payout is looked at
  // (its page, the CLI), not here, where it was most of a million-line run's time.
  const sql = statementSql(tenantId, provider, touched, { ours: false });
  const statements = (await client.query<Record<string, unknown>>(sql.text, sql.values as unknown[])).rows.map((r) =>
    toStatement(fromPgBigints(r) as StatementRow),
  );
  // A payout is judged once the provider has named both its amount and its lines; a
  // source that does not say which lines a payout paid (Stripe's balance transactions
  // API without ?payout=) leaves its statement open, not wrong.
  const judged = statements.filter((s) => s.theirs.residual !== null && s.lines > 0);
  const off = judged.filter((s) => s.theirs.residual !== 0n);
  const balanced = judged.filter((s) => s.theirs.residual === 0n).map((s) => s.reference);

  let residuals = 0;
  for (const s of off) {
    const lines = await client.query(
      `SELECT line_id, reference, kind::text AS kind, gross::text, fee::text, occurred_at FROM payout_lines
       WHERE tenant_id = $1 AND provider = $2::"Provider" AND payout_reference = $3 ORDER BY occurred_at, line_id LIMIT 500`,
      [tenantId, provider, s.reference],
    );
    const evidence = {
      statement: jsonSide(s.theirs),
      currency: s.currency,
      lines: lines.rows,
      note: `${provider} paid out ${s.theirs.payout} ${s.currency} minor units; its ${s.lines} lines add up to ${s.theirs.net}: ${s.theirs.residual} unexplained`,
    };
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO recon_discrepancies AS d (tenant_id, provider, reference, bucket, cause, day, their_amount, their_currency, their_line, our_amount, our_currency, first_run_id, last_run_id, note)
       SELECT $1, $2::"Provider", $3, 'PAYOUT_RESIDUAL', 'PAYOUT_RESIDUAL', coalesce(p.arrival_date, current_date), $4, $5, $6::jsonb, $7, $5, $8, $8, $9
       FROM payouts p WHERE p.tenant_id = $1 AND p.provider = $2::"Provider" AND p.reference = $3
       ON CONFLICT (tenant_id, provider, reference, bucket) DO UPDATE SET last_run_id = EXCLUDED.last_run_id, their_amount = EXCLUDED.their_amount,
         their_line = EXCLUDED.their_line, our_amount = EXCLUDED.our_amount, note = EXCLUDED.note,
         state = CASE WHEN d.state = 'RESOLVED' AND d.their_amount - d.our_amount <> EXCLUDED.their_amount - EXCLUDED.our_amount THEN 'OPEN' ELSE d.state END
       RETURNING d.id::text`,
      [
        tenantId,
        provider,
        s.reference,
        s.theirs.payout,
        s.currency,
        JSON.stringify(evidence),
        s.theirs.net,
        runId,
        evidence.note,
      ],
    );
    const id = rows[0]!.id;
    await client.query(`INSERT INTO recon_run_items (run_id, discrepancy_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
      runId,
      id,
    ]);
    await client.query(
      `INSERT INTO cases (tenant_id, discrepancy_id, kind) SELECT tenant_id, id, 'PAYOUT_RESIDUAL' FROM recon_discrepancies
       WHERE id = $1 AND state <> 'RESOLVED' ON CONFLICT (discrepancy_id) DO NOTHING`,
      [id],
    );
    residuals++;
  }

  if (balanced.length > 0) {
    const fixed = await client.query<{ id: string }>(
      `UPDATE recon_discrepancies SET state = 'RESOLVED', resolved_at = now(), last_run_id = $4::bigint, note = 'balanced on re-check by run ' || $4::text
       WHERE tenant_id = $1 AND provider = $2::"Provider" AND bucket = 'PAYOUT_RESIDUAL' AND reference = ANY($3::text[]) AND state <> 'RESOLVED'
       RETURNING id::text`,
      [tenantId, provider, balanced, runId],
    );
    await closeCasesOfResolved(
      client,
      tenantId,
      fixed.rows.map((r) => r.id),
      runId,
      {
        resolution: `balanced on re-check by run ${runId}`,
        reason: `the payout's statement balances: re-check by reconciliation run ${runId}`,
      },
    );
  }
  return { payouts: touched.length, residuals };
}

/** pg (without Prisma) returns int8 as text: the statement's amounts back to bigint. */
const BIGINT_COLUMNS = new Set([
  "id",
  "our_amount",
  "their_amount",
  "bank_line_id",
  ...["gross", "refunds", "fees", "disputes", "adjustments"].flatMap((c) => [`t_${c}`, `o_${c}`]),
]);
function fromPgBigints(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row).map(([k, v]) => [k, BIGINT_COLUMNS.has(k) && v !== null ? BigInt(v as string) : v]),
  );
}

const jsonSide = (s: StatementSide) =>
  Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v === null ? null : String(v)]));
