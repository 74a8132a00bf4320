// Step 6: the daily comparison, which catches absence. The provider's settlement
// lines are streamed into a temporary table (COPY) and compared with our postings
// by reference, then amount and currency, in SQL, in one transaction:
//   matched          nothing to do
//   theirs-not-ours  the event never arrived: fetched and sent through the normal path
//   ours-not-theirs  a case for a person (flagged "possible timing" near the edges)
//   mismatch         a case for a person
// Nothing but theirs-not-ours is corrected automatically: the rate is the signal.
import { bodySha256 } from "@/lib/pipeline/retention";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import type { PoolClient } from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { recordAudit, SYSTEM_ACTOR, type Actor } from "@/lib/admin/audit";
import { idempotencyKey } from "@/lib/pipeline/claim";
import { config } from "@/lib/platform/config";
import { pool, prisma } from "@/lib/platform/db";
import { openSettings } from "@/lib/platform/secrets-at-rest";
import type { Provider } from "@/lib/generated/prisma/enums";
import { CsvSyntaxError } from "@/lib/recon/csv";
import { ReportError } from "@/lib/providers/report";
import { relayReport, ReportRefusal } from "@/lib/recon/report-relay";
import { settlementSourceFor } from "@/lib/recon/report-formats";
import type { EndpointContext, SettlementLine, SettlementSource, Window } from "@/lib/providers/types";
import type { DomainResult, Reason } from "@/lib/platform/refusal";
import { RAW_EVENTS_CHANNEL, wake } from "@/lib/pipeline/wake";
import { adapterFor } from "@/lib/providers";
import { reconcilePayouts } from "@/lib/recon/payouts";
import { PAYOUT_SETTLEMENT_KINDS, SETTLEMENT_KINDS, SETTLEMENT_MOVEMENT_TYPE } from "@/lib/recon/settlement-movement";
import { refineCauses } from "@/lib/recon/causes";
import { closeCasesOfResolved } from "@/lib/recon/recheck";
import { HELD_NOTE, holdsSettlementMovements, type HeldSettlement } from "@/lib/recon/settlement-approval";

export type ReconSourceInput = { kind: "api" } | { kind: "csv"; file: string; format?: string };

export type ReconInput = {
  tenantId: string;
  provider: Provider;
  /** Required for the API; for a file, defaults to the span of the file's lines. */
  window?: Window;
  source: ReconSourceInput;
  actor: Actor;
  /** Scheduled runs name their day; a second replica finds it taken. */
  scheduledFor?: Date;
};

export type ReconSummary = {
  runId: bigint;
  window: Window;
  compared: number;
  matched: number;
  theirsNotOurs: number;
  oursNotTheirs: number;
  mismatched: number;
  /** Counted in matched: the amounts differ, by no more than the endpoint's tolerance (listed as WITHIN_TOLERANCE). */
  withinTolerance: number;
  /** Fees the settlement reported that our ledger lacked, queued to be posted from it. */
  feesPosted: number;
  /** Other movements only the settlement had (a dispute whose webhook never came), queued likewise. */
  postedFromSettlement: number;
  /**
   * A report that came in over HTTP: its settlement movements are held, not posted (both
   * counts above are 0), until a second person approves (lib/recon/settlement-approval.ts).
   */
  heldForApproval: HeldSettlement | null;
  /** Payouts the report's lines belong to, and those whose statement does not balance (a case each). */
  payouts: number;
  payoutResiduals: number;
  /** Discrepancies seen for the first time by this run. */
  newDiscrepancies: number;
  casesOpened: number;
  resolvedOnRecheck: number;
  fetched: number;
  inFlight: number;
  fetchFailed: number;
  linesOutsideWindow: number;
  /** Settled lines the comparison does not reconcile yet (fees, disputes, adjustments, refund failures), listed on the run. */
  notReconciled: number;
  silence: { settledLines: number; webhooksReceived: number; alert: boolean };
  durationMs: number;
  /** Where the time went: streaming the lines in, comparing in SQL, fetching missing events. */
  phasesMs: { load: number; compare: number; fetch: number };
  /** The compare's statements and steps, by name, in milliseconds. */
  compareSteps: Record<string, number>;
};

class Refused extends Error {
  constructor(
    readonly reason: Reason,
    message: string,
  ) {
    super(message);
  }
}

/** COPY text format: backslash, tab and line breaks escaped. */
const copyText = (v: string) =>
  v.replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n").replace(/\r/g, "\\r");

/** COPY's NULL for an absent (or empty) text. */
const copyOrNull = (v: string | undefined) => (v === undefined || v === "" ? "\\N" : copyText(v));

type Loaded = { money: number; outside: number; header: string[] | null; format: string; span: Window | null };

/** Streams settlement lines into recon_lines without holding them: COPY with back-pressure. */
async function loadLines(
  client: PoolClient,
  lines: AsyncIterable<SettlementLine>,
  window: Window | undefined,
  meta: { header: string[] | null; format: string },
): Promise<Loaded> {
  const loaded: Loaded = { money: 0, outside: 0, header: meta.header, format: meta.format, span: null };
  let min = Infinity;
  let max = -Infinity;
  // Rows go out in ~64 KiB chunks: one CopyData message (and socket write) per row
  // would make the copy syscall-bound.
  async function* chunks() {
    let chunk = "";
    for await (const row of rows()) {
      chunk += row;
      if (chunk.length >= 65_536) {
        yield chunk;
        chunk = "";
      }
    }
    if (chunk) yield chunk;
  }
  async function* rows() {
    for await (const line of lines) {
      const t = line.occurredAt.getTime();
      const outside = window !== undefined && (t < window.from.getTime() || t >= window.to.getTime());
      if (outside) {
        loaded.outside++;
        // Not compared (another window's run compares it), but kept for its payout: a
        // payout's statement needs all its lines, and a provider that settles the next
        // day (Paystack, T+1) reports a day's lines beside a payout dated after it. Only
        // lines the source ties to a payout by id are kept; the rest are dropped.
        if (line.kind === "OTHER" || !line.payout || !line.lineId) continue;
      } else {
        if (line.kind !== "OTHER") loaded.money++;
        min = Math.min(min, t);
        max = Math.max(max, t);
      }
      yield `${line.row}\t${copyText(line.reference)}\t${line.kind}\t${line.amount}\t${line.currency}\t${line.occurredAt.toISOString()}\t${copyText(line.raw)}\t${copyOrNull(line.notReconciled)}\t${line.settledGross ?? line.amount}\t${line.settledCurrency ?? line.currency}\t${line.fee ?? 0n}\t${copyOrNull(line.payout)}\t${copyOrNull(line.lineId)}\t${copyOrNull(line.account)}\t${line.arrivalDate ? line.arrivalDate.toISOString().slice(0, 10) : "\\N"}\t${copyOrNull(line.bankReference?.trim())}\t${outside ? "t" : "f"}\n`;
    }
  }
  const copy = client.query(
    copyFrom(
      "COPY recon_lines (row_no, reference, kind, amount, currency, occurred_at, raw, not_reconciled, settled_gross, settled_currency, fee, payout, line_id, account, arrival_date, bank_reference, outside) FROM STDIN",
    ),
  );
  await pipeline(Readable.from(chunks()), copy);
  if (Number.isFinite(min)) loaded.span = { from: new Date(min), to: new Date(max + 1) };
  return loaded;
}

/** Runs one reconciliation; a malformed report is refused whole, with its row and column, importing nothing. */
export async function runReconciliation(input: ReconInput): Promise<DomainResult<ReconSummary>> {
  const started = Date.now();
  const _c = config();
  const endpoint = await prisma.providerEndpoint.findUnique({
    where: { tenantId_provider: { tenantId: input.tenantId, provider: input.provider } },
  });
  const context: EndpointContext = {
    tenantId: input.tenantId,
    provider: input.provider,
    settings: openSettings((endpoint?.settings ?? {}) as Record<string, unknown>),
  };
  const source: SettlementSource | null = settlementSourceFor(input.provider);
  if (input.source.kind === "api") {
    if (!source)
      return {
        ok: false,
        reason: "no_settlement_api",
        message: `Tally has no settlement API for ${input.provider}; import its settlement report with --file`,
      };
    if (!input.window)
      return {
        ok: false,
        reason: "no_window",
        message: "A run against the provider's API needs a window (--date or --from/--to)",
      };
  }
  if (input.window && input.window.from >= input.window.to)
    return { ok: false, reason: "bad_window", message: "The window's start must be before its end" };

  let run;
  try {
    run = await prisma.reconRun.create({
      data: {
        tenantId: input.tenantId,
        provider: input.provider,
        // A file's own span is only known after reading it; this placeholder is replaced then.
        windowFrom: input.window?.from ?? new Date(0),
        windowTo: input.window?.to ?? new Date(1),
        source: input.source.kind === "api" ? "API" : "CSV",
        sourceName: input.source.kind === "api" ? source!.description : path.basename(input.source.file),
        actorType: input.actor.type,
        actorLabel: input.actor.label,
        scheduledFor: input.scheduledFor ?? null,
      },
    });
  } catch (error) {
    if ((error as { code?: string }).code === "P2002")
      return {
        ok: false,
        reason: "already_ran",
        message: "This scheduled run has already been started by another replica",
      };
    throw error;
  }

  const client = await pool().connect();
  let summary: ReconSummary;
  let loadMs = 0;
  try {
    await client.query("BEGIN");
    await client.query(
      `CREATE TEMP TABLE recon_lines (row_no int, reference text, kind text, amount bigint, currency text, occurred_at timestamptz, raw text, not_reconciled text,
        settled_gross bigint, settled_currency text, fee bigint, payout text, line_id text, account text, arrival_date date, bank_reference text,
        outside boolean NOT NULL DEFAULT false) ON COMMIT DROP`,
    );
    const meta = { header: null as string[] | null, format: "api" };
    const lines =
      input.source.kind === "api"
        ? source!.lines(context, input.window!)
        : relayReport(input.source.file, input.source.format, meta);
    const loadStarted = Date.now();
    const loaded = await loadLines(client, lines, input.window, meta);
    loadMs = Date.now() - loadStarted;
    // A file's header and format are known only once streaming has begun.
    Object.assign(loaded, { header: meta.header, format: meta.format });
    const window = input.window ?? loaded.span;
    if (!window) throw new Refused("empty_report", "The report has no lines to compare");
    const compareStarted = Date.now();
    summary = await compare(client, input, run.id, window, loaded, started, {
      toleranceMinor: endpoint?.matchToleranceMinor ?? 0n,
      dateLagDays: endpoint?.matchDateLagDays ?? 3,
      priority: endpoint?.matchPriority ?? ["reference", "amount_date"],
    });
    await client.query("COMMIT");
    summary.phasesMs = { load: loadMs, compare: Date.now() - compareStarted, fetch: 0 };
    if (summary.feesPosted + summary.postedFromSettlement > 0) wake(RAW_EVENTS_CHANNEL);
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    const refused =
      error instanceof ReportError || error instanceof CsvSyntaxError || error instanceof ReportRefusal
        ? new Refused("malformed_report", `Report refused, nothing imported: ${error.message}`)
        : error instanceof Refused
          ? error
          : null;
    await prisma.reconRun.update({
      where: { id: run.id },
      data: {
        status: "FAILED",
        error: refused?.message ?? String(error),
        finishedAt: new Date(),
        durationMs: Date.now() - started,
      },
    });
    if (refused) return { ok: false, reason: refused.reason, message: refused.message };
    throw error;
  } finally {
    client.release();
  }

  // After commit, and outside any transaction: the network calls for missing events.
  const fetchStarted = Date.now();
  Object.assign(summary, await fetchMissing(run.id, context, source));
  summary.phasesMs.fetch = Date.now() - fetchStarted;
  summary.durationMs = Date.now() - started;
  await prisma.reconRun.update({ where: { id: run.id }, data: { durationMs: summary.durationMs } });
  await prisma.$transaction((tx) =>
    recordAudit(tx, {
      actor: input.actor,
      action: "recon.run",
      subjectType: "recon_run",
      subjectId: String(run.id),
      tenantId: input.tenantId,
      details: {
        provider: input.provider,
        from: summary.window.from,
        to: summary.window.to,
        source: input.source.kind,
        matched: summary.matched,
        theirsNotOurs: summary.theirsNotOurs,
        oursNotTheirs: summary.oursNotTheirs,
        mismatched: summary.mismatched,
        notReconciled: summary.notReconciled,
        heldForApproval: summary.heldForApproval && {
          fees: summary.heldForApproval.fees,
          others: summary.heldForApproval.others,
        },
      },
    }),
  );
  return { ok: true, value: summary };
}

export type MatchRules = { toleranceMinor: bigint; dateLagDays: number; priority: string[] };

async function compare(
  client: PoolClient,
  input: ReconInput,
  runId: bigint,
  window: Window,
  loaded: Loaded,
  started: number,
  rules: MatchRules,
): Promise<ReconSummary> {
  const adapter = adapterFor(input.provider);
  const feesInWebhooks = adapter?.feesInWebhooks === true;
  const settlementOnly: string[] = [...(adapter?.settlementOnly ?? [])];
  const { tenantId, provider } = input;
  const margin = config().TALLY_RECON_TIMING_MARGIN_MS;
  // Each statement's time, by its first words: where a large report's compare goes (bench:recon prints it).
  const steps: Record<string, number> = {};
  const timed = async <R>(name: string, work: Promise<R>): Promise<R> => {
    const t = performance.now();
    const r = await work;
    steps[name] = (steps[name] ?? 0) + Math.round(performance.now() - t);
    return r;
  };
  const q = <T extends Record<string, unknown> = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    timed(sql.trim().split(/\s+/).slice(0, 5).join(" "), client.query<T>(sql, params));

  // Theirs: each line's movement, and its fee as a movement of its own (reference
  // + ":fee", on the clearing account as the provider's balance moved: minus the fee),
  // in the settled currency, which the fee is in.
  await q(`CREATE TEMP TABLE recon_theirs ON COMMIT DROP AS
    WITH items AS (
      SELECT reference, kind, amount, currency, occurred_at, row_no FROM recon_lines WHERE kind <> 'OTHER' AND NOT outside
      UNION ALL
      SELECT reference || ':fee', 'FEE', -fee, settled_currency, occurred_at, row_no FROM recon_lines WHERE kind <> 'OTHER' AND fee <> 0 AND NOT outside)
    SELECT reference, sum(amount)::bigint AS amount, min(currency) AS currency, min(currency) = max(currency) AS one_currency, min(occurred_at) AS occurred_at,
           min(row_no) AS row_no, min(kind) AS kind
    FROM items GROUP BY reference`);
  // Temporary tables have no statistics until analysed; without them the planner
  // picks nested loops over a million rows.
  await q(`ANALYZE recon_theirs`);
  // Ours: every posting of a reference in the window or in their report, whenever it was
  // posted, netted (a correction reversing a payment leaves zero). Signed like theirs:
  // the clearing leg is +amount for a payment, -amount for a refund.
  await q(
    `CREATE TEMP TABLE recon_ours ON COMMIT DROP AS
    WITH refs AS (
      SELECT provider_reference AS reference FROM postings
      WHERE tenant_id = $1 AND provider = $2::"Provider" AND kind <> 'CORRECTION' AND occurred_at >= $3 AND occurred_at < $4
      UNION SELECT reference FROM recon_theirs)
    SELECT p.provider_reference AS reference, sum(e.amount)::bigint AS amount, min(e.currency) AS currency, min(e.currency) = max(e.currency) AS one_currency,
           min(p.occurred_at) FILTER (WHERE p.kind <> 'CORRECTION') AS occurred_at, min(p.id) FILTER (WHERE p.kind <> 'CORRECTION') AS posting_id,
           min(p.kind::text) FILTER (WHERE p.kind <> 'CORRECTION') AS kind
    FROM postings p
    JOIN ledger_entries e ON e.posting_id = p.id
    JOIN accounts a ON a.id = e.account_id AND a.kind = 'PROVIDER_CLEARING'
    WHERE p.tenant_id = $1 AND p.provider = $2::"Provider" AND p.provider_reference IN (SELECT reference FROM refs)
    GROUP BY p.provider_reference`,
    [tenantId, provider, window.from, window.to],
  );
  await q(
    `CREATE TEMP TABLE recon_result ON COMMIT DROP AS
    SELECT coalesce(t.reference, o.reference) AS reference,
      CASE WHEN o.reference IS NULL THEN 'THEIRS_NOT_OURS'
           WHEN t.reference IS NULL THEN 'OURS_NOT_THEIRS'
           WHEN t.amount = o.amount AND t.currency = o.currency AND t.one_currency AND o.one_currency THEN 'MATCHED'
           WHEN t.currency = o.currency AND t.one_currency AND o.one_currency AND abs(t.amount - o.amount) <= $4::bigint THEN 'WITHIN_TOLERANCE'
           ELSE 'MISMATCH' END AS bucket,
      coalesce(t.kind, o.kind) AS kind, t.occurred_at AS their_occurred_at,
      t.amount AS their_amount, t.currency AS their_currency, t.row_no,
      o.amount AS our_amount, o.currency AS our_currency, o.posting_id,
      (coalesce(t.occurred_at, o.occurred_at) AT TIME ZONE 'UTC')::date AS day,
      (t.reference IS NULL AND (o.occurred_at >= $2::timestamptz - $3 * interval '1 millisecond' OR o.occurred_at < $1::timestamptz + $3 * interval '1 millisecond')) AS possible_timing,
      -- Expected: a fee that matches, or one the provider's webhooks never carry, which the
      -- settlement brings as a matter of course (counted as fees on the run, not among the
      -- movements); and a movement of a kind only its settlement reports (an Adyen or
      -- Paystack payout), which we lack until the settlement brings it: posted from it and
      -- counted, never a discrepancy, because nothing failed to arrive.
      coalesce(coalesce(t.kind, o.kind) = 'FEE' AND (
        (t.amount = o.amount AND t.currency = o.currency) OR (o.reference IS NULL AND NOT $5::boolean))
        OR (o.reference IS NULL AND t.kind = ANY($6::text[])), false) AS expected
    FROM recon_theirs t FULL JOIN recon_ours o ON o.reference = t.reference
    -- Fully reversed by a correction and absent from their report: nothing left to compare.
    WHERE NOT (t.reference IS NULL AND o.amount = 0)`,
    [window.from, window.to, margin, rules.toleranceMinor, feesInWebhooks, settlementOnly],
  );
  await q(`ANALYZE recon_result`);

  const upserted = await q<{ id: string; bucket: string; inserted: boolean }>(
    `
    WITH up AS (
      INSERT INTO recon_discrepancies AS d (tenant_id, provider, reference, bucket, cause, day, possible_timing, their_amount, their_currency, their_line, our_amount, our_currency, posting_id, first_run_id, last_run_id)
      SELECT $1, $2::"Provider", r.reference, r.bucket::"DiscrepancyBucket",
             (CASE WHEN r.kind = 'FEE' THEN 'FEE'
                   WHEN r.bucket = 'THEIRS_NOT_OURS' THEN 'NEVER_DELIVERED'
                   WHEN r.bucket = 'OURS_NOT_THEIRS' THEN CASE WHEN r.possible_timing THEN 'LATE' ELSE 'MISSING_AT_PROVIDER' END
                   ELSE 'AMOUNT_DIFFERS' END)::"DiscrepancyCause",
             r.day, r.possible_timing, r.their_amount, r.their_currency,
             CASE WHEN r.row_no IS NULL THEN NULL ELSE jsonb_build_object('row', r.row_no, 'format', $4::text, 'header', $5::jsonb, 'line', l.raw, 'kind', r.kind) END,
             r.our_amount, r.our_currency, r.posting_id, $3, $3
      FROM recon_result r LEFT JOIN recon_lines l ON l.row_no = r.row_no
      -- What is expected to come from the settlement (above): posted below, counted on the
      -- run, and no discrepancy.
      WHERE r.bucket <> 'MATCHED' AND NOT r.expected
      ON CONFLICT (tenant_id, provider, reference, bucket) DO UPDATE SET
        last_run_id = EXCLUDED.last_run_id, possible_timing = EXCLUDED.possible_timing,
        their_amount = EXCLUDED.their_amount, their_currency = EXCLUDED.their_currency, their_line = coalesce(EXCLUDED.their_line, d.their_line),
        our_amount = EXCLUDED.our_amount, our_currency = EXCLUDED.our_currency, posting_id = coalesce(EXCLUDED.posting_id, d.posting_id)
      RETURNING d.id, d.bucket::text, (xmax = 0) AS inserted),
    items AS (INSERT INTO recon_run_items (run_id, discrepancy_id) SELECT $3, id FROM up ON CONFLICT DO NOTHING)
    SELECT id::text, bucket, inserted FROM up`,
    [tenantId, provider, runId, loaded.format, JSON.stringify(loaded.header)],
  );
  // Matched within tolerance: visible, never silent, and nothing for a person to decide.
  await q(
    `UPDATE recon_discrepancies SET state = 'RESOLVED', resolved_at = coalesce(resolved_at, now()),
      note = 'matched within the tolerance of ' || $2::text || ' minor units: ' || (their_amount - our_amount)::text || ' apart'
     WHERE id = ANY($1::bigint[]) AND bucket = 'WITHIN_TOLERANCE'`,
    [upserted.rows.map((r) => r.id), String(rules.toleranceMinor)],
  );
  // Before the settlement postings: their raw events are queued, and the causes read the queue's webhooks.
  await timed(
    "refineCauses",
    refineCauses(
      client,
      tenantId,
      provider,
      upserted.rows.map((r) => BigInt(r.id)),
    ),
  );
  const fromSettlement = await timed(
    "postFromSettlement",
    postFromSettlement(client, input, runId, feesInWebhooks, settlementOnly),
  );

  // Only a person decides ours-not-theirs and mismatches; a case resolved earlier stays resolved.
  const cases = await q<{ id: string }>(
    `
    INSERT INTO cases (tenant_id, discrepancy_id, kind)
    SELECT d.tenant_id, d.id, d.bucket::text::"CaseKind" FROM recon_discrepancies d
    WHERE d.id = ANY($1::bigint[]) AND d.bucket IN ('OURS_NOT_THEIRS', 'MISMATCH') AND d.state <> 'RESOLVED'
    ON CONFLICT (discrepancy_id) DO NOTHING RETURNING id::text`,
    [upserted.rows.map((r) => r.id)],
  );
  // Timing re-check: a case approved as "timing" waits for the next run that covers it;
  // if that run still finds the discrepancy, it is a case again (a match closes it below).
  const reopened = await q<{ id: string; discrepancy_id: string }>(
    `
    UPDATE cases c SET status = 'OPEN', waiting_since = NULL, resolution = NULL
    FROM recon_runs r WHERE r.id = $2 AND c.discrepancy_id = ANY($1::bigint[]) AND c.status = 'WAITING' AND c.waiting_since < r.started_at
    RETURNING c.id::text, c.discrepancy_id::text`,
    [upserted.rows.map((r) => r.id), runId],
  );
  for (const c of reopened.rows) {
    await q(
      `INSERT INTO audit_log (actor_type, actor_label, tenant_id, action, subject_type, subject_id, reason, details) VALUES ('SYSTEM', $1, $2, 'case.reopen', 'case', $3, $4, $5)`,
      [
        SYSTEM_ACTOR.label,
        tenantId,
        c.id,
        `timing re-check: reconciliation run ${runId} still finds the discrepancy`,
        JSON.stringify({ discrepancyId: c.discrepancy_id, runId: String(runId) }),
      ],
    );
  }

  // Re-check: what an earlier run flagged and this one matches is no longer a discrepancy.
  const rechecked = await q<{ id: string; bucket: string; reference: string }>(
    `
    UPDATE recon_discrepancies d SET state = 'RESOLVED', resolved_at = now(), last_run_id = $3::bigint,
      note = CASE d.bucket WHEN 'THEIRS_NOT_OURS' THEN 'posted; matched by run ' || $3::text ELSE 'matched on re-check by run ' || $3::text END
    FROM recon_result r
    WHERE d.tenant_id = $1 AND d.provider = $2::"Provider" AND d.reference = r.reference AND r.bucket IN ('MATCHED', 'WITHIN_TOLERANCE')
      AND d.bucket IN ('THEIRS_NOT_OURS', 'OURS_NOT_THEIRS', 'MISMATCH') AND d.state <> 'RESOLVED'
    RETURNING d.id::text, d.bucket::text, d.reference`,
    [tenantId, provider, runId],
  );
  await timed(
    "closeCasesOfResolved",
    closeCasesOfResolved(
      client,
      tenantId,
      rechecked.rows.map((r) => r.id),
      runId,
      {
        resolution: `matched on re-check by run ${runId}`,
        reason: `the provider reported it: matched on re-check by reconciliation run ${runId}`,
      },
    ),
  );

  const payouts = await timed("reconcilePayouts", reconcilePayouts(client, tenantId, provider, runId));

  await q(
    `INSERT INTO recon_day_stats (tenant_id, provider, day, compared)
    SELECT $1, $2::"Provider", day, count(*) FROM recon_result WHERE NOT expected GROUP BY day
    ON CONFLICT (tenant_id, provider, day) DO UPDATE SET compared = greatest(recon_day_stats.compared, EXCLUDED.compared), updated_at = now()`,
    [tenantId, provider],
  );

  const counts = (
    await q<Record<string, string>>(`SELECT
      count(*) AS compared,
      count(*) FILTER (WHERE bucket IN ('MATCHED', 'WITHIN_TOLERANCE')) AS matched,
      count(*) FILTER (WHERE bucket = 'WITHIN_TOLERANCE') AS within_tolerance,
      count(*) FILTER (WHERE bucket = 'THEIRS_NOT_OURS') AS theirs,
      count(*) FILTER (WHERE bucket = 'OURS_NOT_THEIRS') AS ours,
      count(*) FILTER (WHERE bucket = 'MISMATCH') AS mismatched
    FROM recon_result WHERE NOT expected`)
  ).rows[0]!;

  // Lines about money the comparison does not reconcile yet: counted and listed, never dropped.
  const unreconciled = (
    await q<{ n: string; lines: unknown[] | null }>(`SELECT count(*) AS n,
      (SELECT json_agg(json_build_object('row', row_no, 'reference', reference, 'category', not_reconciled, 'amount', amount::text, 'currency', currency, 'occurredAt', occurred_at) ORDER BY row_no)
         FROM (SELECT * FROM recon_lines WHERE not_reconciled IS NOT NULL AND NOT outside ORDER BY row_no LIMIT 1000) l) AS lines
    FROM recon_lines WHERE not_reconciled IS NOT NULL AND NOT outside`)
  ).rows[0]!;
  const silence = await checkSilence(client, tenantId, provider, window, loaded.money, runId);
  const n = (k: string) => Number(counts[k]);
  await q(
    `UPDATE recon_runs SET status = 'DONE', finished_at = now(), duration_ms = $2, window_from = $3, window_to = $4,
      compared = $5, matched = $6, theirs_not_ours = $7, ours_not_theirs = $8, mismatched = $9, webhooks_received = $10, silence_alert = $11,
      not_reconciled = $12, not_reconciled_lines = $13, within_tolerance = $14, fees_posted = $15, payouts = $16, rules = $17 WHERE id = $1`,
    [
      runId,
      Date.now() - started,
      window.from,
      window.to,
      n("compared"),
      n("matched"),
      n("theirs"),
      n("ours"),
      n("mismatched"),
      silence.webhooksReceived,
      silence.alert,
      Number(unreconciled.n),
      JSON.stringify(unreconciled.lines ?? []),
      n("within_tolerance"),
      fromSettlement.held ? 0 : fromSettlement.fees,
      payouts.payouts,
      JSON.stringify({ ...rules, toleranceMinor: String(rules.toleranceMinor) }),
    ],
  );
  return {
    runId,
    window,
    compared: n("compared"),
    matched: n("matched"),
    theirsNotOurs: n("theirs"),
    oursNotTheirs: n("ours"),
    mismatched: n("mismatched"),
    withinTolerance: n("within_tolerance"),
    feesPosted: fromSettlement.held ? 0 : fromSettlement.fees,
    postedFromSettlement: fromSettlement.held ? 0 : fromSettlement.others,
    heldForApproval: fromSettlement.held,
    payouts: payouts.payouts,
    payoutResiduals: payouts.residuals,
    newDiscrepancies: upserted.rows.filter((r) => r.inserted).length,
    casesOpened: cases.rowCount ?? 0,
    resolvedOnRecheck: rechecked.rowCount ?? 0,
    fetched: 0,
    inFlight: 0,
    fetchFailed: 0,
    linesOutsideWindow: loaded.outside,
    notReconciled: Number(unreconciled.n),
    silence,
    durationMs: Date.now() - started,
    phasesMs: { load: 0, compare: 0, fetch: 0 },
    compareSteps: steps,
  };
}

/**
 * Theirs-not-ours that no webhook will bring: a fee (Stripe's webhooks never carry
 * one), a dispute or adjustment whose webhook never came, and the payouts of a
 * provider that reports them only in its settlement (Adyen, Paystack). Each is stored as a raw
 * event of source SETTLEMENT in Tally's own body (lib/recon/settlement-movement.ts),
 * in this transaction and set-based (a million-line report has a million fees), and
 * the worker claims and posts it like any delivery: a webhook for it arriving later
 * is a duplicate. References already claimed are skipped. The discrepancies (all
 * but the expected ones) become FETCHED, like fetched events.
 *
 * A report that came in over HTTP (holdsSettlementMovements) is one person's file that
 * nobody else checked: the same bodies are held instead (recon_held_movements, with
 * their totals in recon_settlement_approvals), its discrepancies IN_FLIGHT, and nothing
 * reaches raw_events until a second person approves (lib/recon/settlement-approval.ts).
 */
async function postFromSettlement(
  client: PoolClient,
  input: ReconInput,
  runId: bigint,
  feesInWebhooks: boolean,
  settlementOnly: string[],
): Promise<{ fees: number; others: number; held: HeldSettlement | null }> {
  const { tenantId, provider } = input;
  const kinds: string[] = [...SETTLEMENT_KINDS, ...PAYOUT_SETTLEMENT_KINDS.filter((k) => settlementOnly.includes(k))];
  const movements = `WITH todo AS (
      SELECT r.reference, r.kind, r.their_amount, r.their_currency, r.their_occurred_at, r.row_no, l.raw, l.account, l.arrival_date, l.payout, l.bank_reference,
        -- The movement's amount: its clearing leg is the line's (fees, disputes and payouts take from the balance).
        CASE WHEN r.kind IN ('FEE', 'DISPUTE', 'PAYOUT') THEN -r.their_amount ELSE r.their_amount END AS amount
      FROM recon_result r LEFT JOIN recon_lines l ON l.row_no = r.row_no
      WHERE r.bucket = 'THEIRS_NOT_OURS' AND r.kind = ANY($4::text[]) AND r.their_currency IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM processed_events pe WHERE pe.idempotency_key = $1::text || ':' || $2::text || ':' || r.reference)),
    bodies AS (
      SELECT reference, kind, amount, their_currency AS currency, convert_to(jsonb_build_object(
        'type', $5::text,
        'movement', jsonb_strip_nulls(jsonb_build_object(
          'kind', kind, 'reference', reference,
          'paymentReference', CASE WHEN kind = 'FEE' AND reference LIKE '%:fee' THEN left(reference, -4)
                                   -- A failed payout waits for the payout it returns: the line's payout, else Stripe's po_…:failed convention.
                                   WHEN kind = 'PAYOUT_FAILED' THEN coalesce(nullif(payout, reference), CASE WHEN reference LIKE '%:failed' THEN left(reference, -7) END) END,
          'account', CASE WHEN kind IN ('PAYOUT', 'PAYOUT_FAILED') THEN account END,
          'arrivalDate', CASE WHEN kind = 'PAYOUT' THEN to_char(arrival_date, 'YYYY-MM-DD') END,
          'bankReference', CASE WHEN kind = 'PAYOUT' THEN bank_reference END,
          'amount', amount::text,
          'currency', their_currency,
          'occurredAt', to_char(their_occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'description', $2::text || ' ' || lower(replace(kind, '_', ' ')) || ' ' || reference || ', from the settlement')),
        'source', jsonb_build_object('runId', $3::text, 'row', row_no, 'line', coalesce(raw, '')))::text, 'UTF8') AS body
      FROM todo)`;
  const held = holdsSettlementMovements(input);
  if (held) {
    const { rows } = await client.query<{ fees: string; others: string; totals: HeldSettlement["totals"] }>(
      `${movements},
      approval AS (
        INSERT INTO recon_settlement_approvals (tenant_id, run_id, started_by_id, started_by_label, fees, others, totals)
        SELECT $1::uuid, $3::text::bigint, $7::uuid, $8::text, count(*) FILTER (WHERE kind = 'FEE'), count(*) FILTER (WHERE kind <> 'FEE'),
          (SELECT jsonb_agg(jsonb_build_object('kind', kind, 'currency', currency, 'count', n, 'amount', total::text) ORDER BY kind, currency)
             FROM (SELECT kind, currency, count(*) AS n, sum(amount) AS total FROM bodies GROUP BY kind, currency) t)
        FROM bodies HAVING count(*) > 0
        RETURNING fees, others, totals),
      stored AS (
        INSERT INTO recon_held_movements (tenant_id, run_id, reference, kind, amount, currency, body, marks_discrepancy)
        SELECT $1::uuid, $3::text::bigint, reference, kind, amount, currency, body, kind <> 'FEE' OR $6::boolean FROM bodies
        RETURNING reference, marks_discrepancy),
      marked AS (
        UPDATE recon_discrepancies d SET state = 'IN_FLIGHT', note = $9::text
        FROM stored s
        WHERE s.marks_discrepancy AND d.tenant_id = $1::uuid AND d.provider = $2::"Provider" AND d.reference = s.reference
          AND d.bucket = 'THEIRS_NOT_OURS' AND d.state IN ('OPEN', 'FETCH_FAILED'))
      SELECT fees, others, totals FROM approval`,
      [
        tenantId,
        provider,
        String(runId),
        kinds,
        SETTLEMENT_MOVEMENT_TYPE,
        feesInWebhooks,
        input.actor.type === "USER" ? (input.actor.id ?? null) : null,
        input.actor.label,
        HELD_NOTE(runId),
      ],
    );
    const h = rows[0];
    if (!h) return { fees: 0, others: 0, held: null };
    const fees = Number(h.fees);
    const others = Number(h.others);
    return { fees, others, held: { fees, others, totals: h.totals } };
  }
  const { rows } = await client.query<{ fees: string; others: string }>(
    `${movements},
    hashed AS (SELECT reference, kind, body, sha256(body) AS sha FROM bodies),
    stored AS (
      INSERT INTO raw_events (tenant_id, provider, source, raw_body, body_sha256, headers)
      SELECT $1::uuid, $2::"Provider", 'SETTLEMENT', body, sha,
             jsonb_build_object('content-type', 'application/json', 'x-tally-settlement-run', $3::text)
      FROM hashed RETURNING id, body_sha256),
    -- The stored events that have a discrepancy to mark (not the expected fees), each found by
    -- its body's hash: parsing a million bodies back, or joining them all, costs more.
    found AS (
      SELECT h.reference, s.id FROM stored s JOIN hashed h ON h.sha = s.body_sha256 WHERE h.kind <> 'FEE' OR $6::boolean),
    marked AS (
      UPDATE recon_discrepancies d SET state = 'FETCHED', raw_event_id = f.id, note = 'posted from the settlement by run ' || $3::text
      FROM found f
      WHERE d.tenant_id = $1::uuid AND d.provider = $2::"Provider" AND d.reference = f.reference AND d.bucket = 'THEIRS_NOT_OURS'
        AND d.state IN ('OPEN', 'FETCH_FAILED'))
    SELECT count(*) FILTER (WHERE kind = 'FEE') AS fees, count(*) FILTER (WHERE kind <> 'FEE') AS others FROM hashed`,
    [tenantId, provider, String(runId), kinds, SETTLEMENT_MOVEMENT_TYPE, feesInWebhooks],
  );
  const fees = Number(rows[0]!.fees);
  const others = Number(rows[0]!.others);
  return { fees, others, held: null };
}

/**
 * The provider settled money in this window; did its webhooks reach us? A
 * provider whose deliveries stopped (a wrong URL, a rotated secret) shows up
 * here long before its retries run out, as an alert ops see.
 */
async function checkSilence(
  client: PoolClient,
  tenantId: string,
  provider: Provider,
  window: Window,
  settledLines: number,
  runId: bigint,
) {
  const c = config();
  const { rows } = await client.query<{ received: string; last: Date | null }>(
    `SELECT count(*) FILTER (WHERE received_at >= $3 AND received_at < $4) AS received, max(received_at) AS last
     FROM raw_events WHERE tenant_id = $1 AND provider = $2::"Provider" AND source = 'WEBHOOK'`,
    [tenantId, provider, window.from, window.to],
  );
  const webhooksReceived = Number(rows[0]!.received);
  const alert = settledLines >= c.TALLY_SILENCE_MIN_LINES && webhooksReceived < settledLines * c.TALLY_SILENCE_RATIO;
  const open = await client.query<{ id: string }>(
    `SELECT id::text FROM alerts WHERE tenant_id = $1 AND provider = $2::"Provider" AND kind = 'webhook_silence' AND cleared_at IS NULL`,
    [tenantId, provider],
  );
  if (alert) {
    const last = rows[0]!.last ? `the last one arrived ${rows[0]!.last.toISOString()}` : "none has ever arrived";
    const message = `${provider} settled ${settledLines} payments and refunds between ${window.from.toISOString()} and ${window.to.toISOString()}, but Tally received ${webhooksReceived} webhooks from it in that time (${last}). Check the webhook URL and signing secret configured at ${provider}.`;
    if (open.rowCount)
      await client.query(`UPDATE alerts SET message = $2, run_id = $3 WHERE id = $1`, [
        open.rows[0]!.id,
        message,
        runId,
      ]);
    else
      await client.query(
        `INSERT INTO alerts (tenant_id, provider, kind, message, run_id) VALUES ($1, $2::"Provider", 'webhook_silence', $3, $4)`,
        [tenantId, provider, message, runId],
      );
  } else if (open.rowCount) {
    await client.query(`UPDATE alerts SET cleared_at = now() WHERE id = ANY($1::bigint[])`, [
      open.rows.map((r) => r.id),
    ]);
  }
  return { settledLines, webhooksReceived, alert };
}

/**
 * Theirs-not-ours: the event never arrived. Unless we already hold it, fetch it
 * from the provider and store it as a raw event (source RECONCILIATION); the
 * worker claims and posts it like any delivery, so a late real webhook for it
 * is a duplicate, not a second credit.
 */
async function fetchMissing(
  runId: bigint,
  endpoint: EndpointContext,
  source: SettlementSource | null,
): Promise<Pick<ReconSummary, "fetched" | "inFlight" | "fetchFailed">> {
  const missing = await prisma.reconDiscrepancy.findMany({
    where: { bucket: "THEIRS_NOT_OURS", state: { in: ["OPEN", "FETCH_FAILED"] }, runItems: { some: { runId } } },
    select: { id: true, reference: true },
  });
  const result = { fetched: 0, inFlight: 0, fetchFailed: 0 };
  const queue = [...missing];
  const worker = async () => {
    for (let d = queue.shift(); d; d = queue.shift()) {
      const claim = await prisma.processedEvent.findUnique({
        where: { idempotencyKey: idempotencyKey(endpoint.tenantId, endpoint.provider, d.reference) },
      });
      if (claim) {
        result.inFlight++;
        await prisma.reconDiscrepancy.update({
          where: { id: d.id },
          data: {
            state: "IN_FLIGHT",
            rawEventId: claim.rawEventId,
            note: `we hold this event (claim ${claim.id}, ${claim.status}); it is not posted yet`,
          },
        });
        continue;
      }
      if (!source) {
        result.fetchFailed++;
        await prisma.reconDiscrepancy.update({
          where: { id: d.id },
          data: {
            state: "FETCH_FAILED",
            note: `Tally cannot fetch single ${endpoint.provider} events; have the provider resend it`,
          },
        });
        continue;
      }
      try {
        const event = await source.fetchEvent(endpoint, d.reference);
        if (!event) {
          result.fetchFailed++;
          await prisma.reconDiscrepancy.update({
            where: { id: d.id },
            data: { state: "FETCH_FAILED", note: `${endpoint.provider} does not know ${d.reference}` },
          });
          continue;
        }
        const raw = await prisma.rawEvent.create({
          data: {
            tenantId: endpoint.tenantId,
            provider: endpoint.provider,
            source: "RECONCILIATION",
            rawBody: event.rawBody,
            bodySha256: bodySha256(event.rawBody),
            headers: { ...event.headers, "x-tally-fetched-from": event.fetchedFrom },
          },
          select: { id: true },
        });
        result.fetched++;
        await prisma.reconDiscrepancy.update({
          where: { id: d.id },
          data: { state: "FETCHED", rawEventId: raw.id, note: `fetched by run ${runId}` },
        });
      } catch (error) {
        result.fetchFailed++;
        await prisma.reconDiscrepancy.update({
          where: { id: d.id },
          data: {
            state: "FETCH_FAILED",
            note: `fetch failed: ${error instanceof Error ? error.message : String(error)}`,
          },
        });
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  if (result.fetched) wake(RAW_EVENTS_CHANNEL);
  return result;
}
