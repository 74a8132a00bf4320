// npm run bench:recon: reconcile a generated Stripe itemized report of RECON_ROWS
// lines (default 1,000,000), every charge with its fee and paid out in one of
// RECON_ROWS / 10,000 payouts (with their payout lines), against as many stored
// payments and the payouts' postings, and print time and peak memory beside a
// same-run floor: the same rows written as fast as plain SQL can after COPY of the
// file into a temp table (the anti-joins, a settlement raw event per fee, the
// payout lines kept, the payouts' statements).
// Targets (#20): within 1.5x of the floor; memory under 512 MiB.
import { createReadStream, createWriteStream, statSync } from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { benchTempDir, runBench, type BenchDatabase, fmt, saveResult } from "@/bench/support";

const ROWS = Number(process.env.RECON_ROWS ?? 1_000_000);
const DAY_START = Date.UTC(2026, 10, 1);
const ref = (i: number) => `pi_bench_${String(i).padStart(8, "0")}`;
// A few of each discrepancy, at fixed positions: the counts are known in advance.
const _isMissingFromUs = (i: number) => i % 10_000 === 1;
const _isMismatch = (i: number) => i % 10_000 === 2;
const isMissingFromThem = (i: number) => i % 10_000 === 3;
const amountOf = (i: number) => 100 + (i % 50_000);
/** Stripe's 2.9% + 30 cents, in cents. */
const feeOf = (i: number) => Math.round(amountOf(i) * 0.029) + 30;
const LINES_PER_PAYOUT = 10_000;
const payoutOf = (i: number) => `po_bench_${String(Math.ceil(i / LINES_PER_PAYOUT)).padStart(5, "0")}`;
const PAYOUTS = Math.ceil(ROWS / LINES_PER_PAYOUT);
/** A payout's amount: the net of its lines the report carries (what Stripe paid out). */
function payoutAmounts(): Map<string, number> {
  const amounts = new Map<string, number>();
  for (let i = 1; i <= ROWS; i++) {
    if (isMissingFromThem(i)) continue;
    amounts.set(payoutOf(i), (amounts.get(payoutOf(i)) ?? 0) + amountOf(i) - feeOf(i));
  }
  return amounts;
}

async function seedLedger(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  // Bulk setup only: triggers off (the deferred balance check would run per row).
  await c.query("SET session_replication_role = replica");
  const tenantId = (await c.query(`INSERT INTO tenants (slug, name) VALUES ('bench', 'Bench') RETURNING id`)).rows[0]
    .id as string;
  await c.query(`INSERT INTO provider_endpoints (tenant_id, provider) VALUES ($1, 'stripe')`, [tenantId]);
  await c.query(`INSERT INTO accounts (tenant_id, code, kind) VALUES ($1, 'clearing:stripe', 'PROVIDER_CLEARING')`, [
    tenantId,
  ]);
  await c.query(
    `INSERT INTO accounts (tenant_id, code, kind) SELECT $1, 'customer:acct_' || g, 'CUSTOMER' FROM generate_series(1, 1000) g`,
    [tenantId],
  );
  const started = performance.now();
  await c.query(
    `
    INSERT INTO postings (id, tenant_id, kind, provider, provider_reference, description, occurred_at)
    SELECT g, $1, 'PAYMENT', 'stripe', 'pi_bench_' || lpad(g::text, 8, '0'), 'bench', to_timestamp($2::float8 / 1000 + (g % 86000))
    FROM generate_series(1, $3::int) g WHERE g % 10000 <> 1`,
    [tenantId, DAY_START, ROWS],
  );
  const clearing = (
    await c.query(`SELECT id FROM accounts WHERE tenant_id = $1 AND code = 'clearing:stripe'`, [tenantId])
  ).rows[0].id;
  const firstCustomer = Number(
    (await c.query(`SELECT min(id) AS id FROM accounts WHERE tenant_id = $1 AND kind = 'CUSTOMER'`, [tenantId])).rows[0]
      .id,
  );
  await c.query(
    `
    INSERT INTO ledger_entries (posting_id, account_id, amount, currency)
    SELECT p.id, a.account, CASE WHEN a.side = 1 THEN 1 ELSE -1 END * (100 + (p.id % 50000) + CASE WHEN p.id % 10000 = 2 THEN 1 ELSE 0 END), 'USD'
    FROM postings p CROSS JOIN LATERAL (VALUES (1, $2::bigint), (2, $3::bigint + (p.id % 1000))) a(side, account)
    WHERE p.tenant_id = $1`,
    [tenantId, clearing, firstCustomer],
  );
  // The payouts, as their payout.paid webhooks posted them: clearing to the bank, and their rows.
  const bank = (
    await c.query(`INSERT INTO accounts (tenant_id, code, kind) VALUES ($1, 'bank:ba_bench', 'BANK') RETURNING id`, [
      tenantId,
    ])
  ).rows[0].id;
  const payouts = [...payoutAmounts()];
  await c.query(
    `WITH p AS (
       INSERT INTO postings (id, tenant_id, kind, provider, provider_reference, description, occurred_at)
       SELECT $3::int + n, $1, 'PAYOUT', 'stripe', ref, 'bench payout', to_timestamp($2::float8 / 1000 + 86000)
       FROM unnest($4::text[]) WITH ORDINALITY AS u(ref, n) RETURNING id, provider_reference),
     e AS (
       INSERT INTO ledger_entries (posting_id, account_id, amount, currency)
       SELECT p.id, a.account, a.sign * u.amount, 'USD' FROM p JOIN unnest($4::text[], $5::bigint[]) AS u(ref, amount) ON u.ref = p.provider_reference
       CROSS JOIN LATERAL (VALUES ($6::bigint, -1), ($7::bigint, 1)) a(account, sign))
     INSERT INTO payouts (tenant_id, provider, reference, currency, our_amount, destination, arrival_date, posting_id)
     SELECT $1, 'stripe', p.provider_reference, 'USD', u.amount, 'ba_bench', to_timestamp($2::float8 / 1000)::date + 2, p.id
     FROM p JOIN unnest($4::text[], $5::bigint[]) AS u(ref, amount) ON u.ref = p.provider_reference`,
    [tenantId, DAY_START, ROWS, payouts.map(([r]) => r), payouts.map(([, a]) => String(a)), clearing, bank],
  );
  await c.query("ANALYZE");
  console.log(
    `seeded ${ROWS.toLocaleString()} payments and ${payouts.length} payouts (${fmt((performance.now() - started) / 1000)} s)`,
  );
  await c.end();
  return tenantId;
}

async function writeReport(file: string): Promise<void> {
  const out = createWriteStream(file);
  const write = (s: string) =>
    out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once("drain", () => r()));
  await write(
    "balance_transaction_id,created_utc,available_on_utc,currency,gross,fee,net,reporting_category,source_id,description,payment_intent_id,charge_id,refund_id,automatic_payout_id\n",
  );
  let chunk = "";
  const major = (cents: number) => `${cents < 0 ? "-" : ""}${(Math.abs(cents) / 100).toFixed(2)}`;
  for (let i = 1; i <= ROWS; i++) {
    if (isMissingFromThem(i)) continue;
    const at = new Date(DAY_START + (i % 86_000) * 1000).toISOString().replace("T", " ").slice(0, 19);
    // The mismatched payments: Stripe's gross is ours minus a cent (seeded +1).
    const gross = amountOf(i);
    chunk += `txn_${i},${at},${at},usd,${major(gross)},${major(feeOf(i))},${major(gross - feeOf(i))},charge,ch_${i},Payment ${i},${ref(i)},ch_${i},,${payoutOf(i)}\n`;
    if (chunk.length > 1 << 16) {
      await write(chunk);
      chunk = "";
    }
  }
  const at = new Date(DAY_START + 86_000 * 1000).toISOString().replace("T", " ").slice(0, 19);
  for (const [po, amount] of payoutAmounts())
    chunk += `txn_${po},${at},${at},usd,${major(-amount)},0.00,${major(-amount)},payout,${po},Payout,,,,${po}\n`;
  await write(chunk);
  await new Promise<void>((r) => out.end(() => r()));
}

async function baseline(url: string, tenantId: string, file: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const started = performance.now();
  await c.query("BEGIN");
  await c.query(
    `CREATE TEMP TABLE report (balance_transaction_id text, created_utc text, available_on_utc text, currency text, gross text, fee text, net text, reporting_category text, source_id text, description text, payment_intent_id text, charge_id text, refund_id text, automatic_payout_id text) ON COMMIT DROP`,
  );
  await pipeline(createReadStream(file), c.query(copyFrom("COPY report FROM STDIN WITH (FORMAT csv, HEADER true)")));
  await c.query(
    `CREATE TEMP TABLE theirs ON COMMIT DROP AS
     SELECT coalesce(nullif(payment_intent_id, ''), source_id) AS reference, round(gross::numeric * 100)::bigint AS amount, upper(currency) AS currency,
            created_utc::timestamptz AS at, balance_transaction_id AS line
     FROM report WHERE reporting_category IN ('charge', 'payout')
     UNION ALL
     SELECT payment_intent_id || ':fee', -round(fee::numeric * 100)::bigint, upper(currency), created_utc::timestamptz, balance_transaction_id
     FROM report WHERE reporting_category = 'charge' AND fee::numeric <> 0`,
  );
  await c.query(`CREATE INDEX ON theirs (reference)`);
  await c.query(`ANALYZE theirs`);
  const ours = `SELECT p.provider_reference AS reference, e.amount, e.currency FROM postings p JOIN ledger_entries e ON e.posting_id = p.id JOIN accounts a ON a.id = e.account_id AND a.kind = 'PROVIDER_CLEARING' WHERE p.tenant_id = '${tenantId}'`;
  const theirsNotOurs = Number(
    (
      await c.query(
        `SELECT count(*) FROM theirs t WHERE t.reference NOT LIKE '%:fee' AND NOT EXISTS (SELECT 1 FROM (${ours}) o WHERE o.reference = t.reference)`,
      )
    ).rows[0].count,
  );
  const oursNotTheirs = Number(
    (
      await c.query(
        `SELECT count(*) FROM (${ours}) o WHERE NOT EXISTS (SELECT 1 FROM theirs t WHERE t.reference = o.reference)`,
      )
    ).rows[0].count,
  );
  const mismatched = Number(
    (
      await c.query(
        `SELECT count(*) FROM theirs t JOIN (${ours}) o ON o.reference = t.reference WHERE o.amount <> t.amount OR o.currency <> t.currency`,
      )
    ).rows[0].count,
  );
  // The rows reconciliation writes: a settlement raw event per fee our ledger lacks
  // (every fee here), and the payout lines; then each payout's statement.
  const fees = Number(
    (
      await c.query(
        `WITH b AS (
           SELECT convert_to(jsonb_build_object('type', 'tally.settlement_movement', 'movement', jsonb_build_object('kind', 'FEE', 'reference', t.reference, 'amount', (-t.amount)::text, 'currency', t.currency, 'occurredAt', t.at, 'description', 'fee'), 'source', jsonb_build_object('line', t.line))::text, 'UTF8') AS body
           FROM theirs t WHERE t.reference LIKE '%:fee' AND NOT EXISTS (SELECT 1 FROM (${ours}) o WHERE o.reference = t.reference)),
         ins AS (
           INSERT INTO raw_events (tenant_id, provider, source, raw_body, body_sha256, headers)
           SELECT $1, 'stripe', 'SETTLEMENT', body, sha256(body), '{}' FROM b RETURNING 1)
         SELECT count(*) FROM ins`,
        [tenantId],
      )
    ).rows[0].count,
  );
  await c.query(
    `INSERT INTO payout_lines (tenant_id, provider, payout_reference, line_id, reference, kind, gross, fee, currency, occurred_at, run_id, row_no, raw)
     SELECT $1, 'stripe', automatic_payout_id, balance_transaction_id, coalesce(nullif(payment_intent_id, ''), source_id),
            CASE reporting_category WHEN 'payout' THEN 'PAYOUT' ELSE 'PAYMENT' END::"PostingKind",
            round(gross::numeric * 100)::bigint, round(fee::numeric * 100)::bigint, upper(currency), created_utc::timestamptz, 0, 0,
            concat_ws(',', balance_transaction_id, created_utc, available_on_utc, currency, gross, fee, net, reporting_category, source_id, description, payment_intent_id, charge_id, refund_id, automatic_payout_id)
     FROM report WHERE automatic_payout_id <> ''`,
    [tenantId],
  );
  const residuals = Number(
    (
      await c.query(
        `SELECT count(*) FROM (
           SELECT payout_reference, sum(gross - fee) FILTER (WHERE kind <> 'PAYOUT') + sum(gross) FILTER (WHERE kind = 'PAYOUT') AS residual
           FROM payout_lines WHERE tenant_id = $1 GROUP BY payout_reference) s WHERE residual <> 0`,
        [tenantId],
      )
    ).rows[0].count,
  );
  await c.query("ROLLBACK");
  await c.end();
  return { seconds: (performance.now() - started) / 1000, theirsNotOurs, oursNotTheirs, mismatched, fees, residuals };
}

async function main(db: BenchDatabase) {
  const dir = benchTempDir("tally-bench-recon-");
  const url = await db.create("tally_bench_recon");
  process.env.DATABASE_URL = url;
  const tenantId = await seedLedger(url);
  const file = path.join(dir, "itemized.csv");
  await writeReport(file);
  const expected = {
    theirsNotOurs: Math.floor((ROWS - 1) / 10_000) + 1,
    oursNotTheirs: Math.floor((ROWS - 3) / 10_000) + 1,
    mismatched: Math.floor((ROWS - 2) / 10_000) + 1,
    // Every fee of the report (our ledger has none), and every payout, balanced.
    feesPosted: ROWS - (Math.floor((ROWS - 3) / 10_000) + 1),
    payouts: PAYOUTS,
    payoutResiduals: 0,
  };
  console.log(
    `report: ${ROWS.toLocaleString()} lines, ${fmt(statSync(file).size / 2 ** 20)} MiB; expected ${JSON.stringify(expected)}\n`,
  );

  const base = await baseline(url, tenantId, file);
  console.log(
    `floor: COPY + SQL anti-joins + the rows  ${fmt(base.seconds, 2).padStart(7)} s   ${JSON.stringify({ theirsNotOurs: base.theirsNotOurs, oursNotTheirs: base.oursNotTheirs, mismatched: base.mismatched, fees: base.fees, residuals: base.residuals })}`,
  );

  const { runReconciliation } = await import("@/lib/recon/run");
  const { closeDb } = await import("@/lib/platform/db");
  let peak = process.memoryUsage().rss;
  const startRss = peak;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  const r = await runReconciliation({
    tenantId,
    provider: "stripe",
    source: { kind: "csv", file },
    actor: SYSTEM_ACTOR,
  });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  if (!r.ok) throw new Error(r.message);
  const got = {
    theirsNotOurs: r.value.theirsNotOurs,
    oursNotTheirs: r.value.oursNotTheirs,
    mismatched: r.value.mismatched,
    feesPosted: r.value.feesPosted,
    payouts: r.value.payouts,
    payoutResiduals: r.value.payoutResiduals,
  };
  console.log(
    `tally: stream → COPY → compare → cases   ${fmt(seconds, 2).padStart(7)} s   ${JSON.stringify(got)}   peak RSS ${fmt(peak / 2 ** 20, 0)} MiB (at start ${fmt(startRss / 2 ** 20, 0)} MiB)`,
  );
  console.log(
    `  phases: stream+COPY ${r.value.phasesMs.load} ms, compare ${r.value.phasesMs.compare} ms, fetch ${r.value.phasesMs.fetch} ms`,
  );
  console.log(
    `  compare, by step (ms): ${Object.entries(r.value.compareSteps)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}: ${v}`)
      .join("; ")}`,
  );
  await closeDb();

  const ratio = seconds / base.seconds;
  const verdicts = {
    bucketsAsGenerated:
      JSON.stringify(got) === JSON.stringify(expected) && base.theirsNotOurs === expected.theirsNotOurs,
    within1_5xOfFloor: ratio <= 1.5,
    peakUnder512MiB: peak < 512 * 2 ** 20,
  };
  console.log(`\ntime tally/baseline: ${fmt(ratio, 2)}x`);
  for (const [name, ok] of Object.entries(verdicts)) console.log(`  ${ok ? "PASS" : "FAIL"}  ${name}`);
  console.log(
    `saved ${saveResult("recon", { rows: ROWS, baselineSeconds: base.seconds, tallySeconds: seconds, phasesMs: r.value.phasesMs, compareSteps: r.value.compareSteps, ratio, peakRssMiB: peak / 2 ** 20, startRssMiB: startRss / 2 ** 20, buckets: got, expected, verdicts })}`,
  );
  if (!Object.values(verdicts).every(Boolean)) process.exitCode = 1;
}

runBench(main, { build: false });
