// npm run bench:recon: reconcile a generated Stripe itemized report of RECON_ROWS
// lines (default 1,000,000), every charge with its fee and paid out in one of
// RECON_ROWS / 10,000 payouts (with their payout lines), against as many stored
// payments and the payouts' postings, and print time and peak memory beside a
// same-run floor: the same rows written and committed as fast as plain SQL can after
// COPY of the file into a temp table (the run, the discrepancies and their cases, a
// settlement raw event per fee, the payout lines and amounts, the statements, the
// day's stats). Four passes, floor, tally, tally, floor, each on a fresh copy of the
// seeded database; the ratio is of the medians (with two passes a side, of the sums).
// Targets (#20): within 1.5x of the floor; memory under 512 MiB.
import { createReadStream, createWriteStream, statSync } from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { benchTempDir, runBench, type BenchDatabase, fmt, median, saveResult } from "@/bench/support";

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

/**
 * The floor: what the run stores, written as fast as plain SQL can, in one transaction
 * that commits (as the run's does): its run row, the discrepancies with their run items
 * and cases, a settlement raw event per fee our ledger lacks (every fee here, with the
 * run's headers), the payout lines, each payout's amount as the provider states it and
 * the residual of its statement, the day's stats, the run's counts.
 */
async function baseline(url: string, tenantId: string, file: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const started = performance.now();
  await c.query("BEGIN");
  const runId = (
    await c.query(
      `INSERT INTO recon_runs (tenant_id, provider, window_from, window_to, source, source_name, actor_type, actor_label)
       VALUES ($1, 'stripe', to_timestamp($2::float8 / 1000), to_timestamp($2::float8 / 1000 + 86400), 'CSV', $3, 'SYSTEM', 'bench floor') RETURNING id`,
      [tenantId, DAY_START, path.basename(file)],
    )
  ).rows[0].id as string;
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
  await c.query(
    `CREATE TEMP TABLE ours ON COMMIT DROP AS
     SELECT p.id AS posting_id, p.provider_reference AS reference, e.amount, e.currency, p.occurred_at AS at
     FROM postings p JOIN ledger_entries e ON e.posting_id = p.id JOIN accounts a ON a.id = e.account_id AND a.kind = 'PROVIDER_CLEARING'
     WHERE p.tenant_id = $1`,
    [tenantId],
  );
  await c.query(`ANALYZE ours`);
  // One comparison, every line and posting in one bucket; fees are expected (posted below, no discrepancy).
  await c.query(
    `CREATE TEMP TABLE result ON COMMIT DROP AS
     SELECT coalesce(t.reference, o.reference) AS reference, t.amount AS their_amount, t.currency AS their_currency, t.line,
            o.amount AS our_amount, o.currency AS our_currency, o.posting_id, coalesce(t.at, o.at)::date AS day,
            CASE WHEN o.reference IS NULL THEN 'THEIRS_NOT_OURS' WHEN t.reference IS NULL THEN 'OURS_NOT_THEIRS'
                 WHEN o.amount <> t.amount OR o.currency <> t.currency THEN 'MISMATCH' ELSE 'MATCHED' END AS bucket,
            (o.reference IS NULL AND t.reference LIKE '%:fee') AS expected
     FROM theirs t FULL JOIN ours o ON o.reference = t.reference`,
  );
  const discrepancies = await c.query<{ id: string; bucket: string }>(
    `WITH up AS (
       INSERT INTO recon_discrepancies (tenant_id, provider, reference, bucket, cause, day, their_amount, their_currency, their_line, our_amount, our_currency, posting_id, first_run_id, last_run_id)
       SELECT $1, 'stripe', reference, bucket::"DiscrepancyBucket",
              (CASE bucket WHEN 'THEIRS_NOT_OURS' THEN 'NEVER_DELIVERED' WHEN 'OURS_NOT_THEIRS' THEN 'MISSING_AT_PROVIDER' ELSE 'AMOUNT_DIFFERS' END)::"DiscrepancyCause",
              day, their_amount, their_currency, CASE WHEN line IS NOT NULL THEN jsonb_build_object('line', line) END, our_amount, our_currency, posting_id, $2, $2
       FROM result WHERE bucket <> 'MATCHED' AND NOT expected RETURNING id, bucket::text),
     items AS (INSERT INTO recon_run_items (run_id, discrepancy_id) SELECT $2, id FROM up)
     SELECT id::text, bucket FROM up`,
    [tenantId, runId],
  );
  await c.query(
    `INSERT INTO cases (tenant_id, discrepancy_id, kind)
     SELECT $1, id, bucket::text::"CaseKind" FROM recon_discrepancies WHERE id = ANY($2::bigint[]) AND bucket IN ('OURS_NOT_THEIRS', 'MISMATCH')`,
    [tenantId, discrepancies.rows.map((r) => r.id)],
  );
  const count = (bucket: string) => discrepancies.rows.filter((r) => r.bucket === bucket).length;
  const fees = Number(
    (
      await c.query(
        `WITH b AS (
           SELECT convert_to(jsonb_build_object('type', 'tally.settlement_movement', 'movement', jsonb_build_object('kind', 'FEE', 'reference', reference, 'paymentReference', left(reference, -4), 'amount', (-their_amount)::text, 'currency', their_currency, 'occurredAt', day, 'description', 'stripe fee ' || reference || ', from the settlement'), 'source', jsonb_build_object('runId', $2::text, 'line', line))::text, 'UTF8') AS body
           FROM result WHERE expected),
         ins AS (
           INSERT INTO raw_events (tenant_id, provider, source, raw_body, body_sha256, headers)
           SELECT $1, 'stripe', 'SETTLEMENT', body, sha256(body), jsonb_build_object('content-type', 'application/json', 'x-tally-settlement-run', $2::text) FROM b RETURNING 1)
         SELECT count(*) FROM ins`,
        [tenantId, runId],
      )
    ).rows[0].count,
  );
  await c.query(
    `INSERT INTO payout_lines (tenant_id, provider, payout_reference, line_id, reference, kind, gross, fee, currency, occurred_at, run_id, row_no, raw)
     SELECT $1, 'stripe', automatic_payout_id, balance_transaction_id, coalesce(nullif(payment_intent_id, ''), source_id),
            CASE reporting_category WHEN 'payout' THEN 'PAYOUT' ELSE 'PAYMENT' END::"PostingKind",
            round(gross::numeric * 100)::bigint, round(fee::numeric * 100)::bigint, upper(currency), created_utc::timestamptz, $2, 0,
            concat_ws(',', balance_transaction_id, created_utc, available_on_utc, currency, gross, fee, net, reporting_category, source_id, description, payment_intent_id, charge_id, refund_id, automatic_payout_id)
     FROM report WHERE automatic_payout_id <> ''`,
    [tenantId, runId],
  );
  await c.query(
    `INSERT INTO payouts (tenant_id, provider, reference, currency, their_amount)
     SELECT $1, 'stripe', payout_reference, min(currency), -sum(gross) FROM payout_lines WHERE tenant_id = $1 AND kind = 'PAYOUT' GROUP BY payout_reference
     ON CONFLICT (tenant_id, provider, reference) DO UPDATE SET their_amount = EXCLUDED.their_amount, updated_at = now()`,
    [tenantId],
  );
  const statements = await c.query<{ payouts: string; residuals: string }>(
    `SELECT count(*) AS payouts, count(*) FILTER (WHERE residual <> 0) AS residuals FROM (
       SELECT payout_reference, sum(gross - fee) FILTER (WHERE kind <> 'PAYOUT') + sum(gross) FILTER (WHERE kind = 'PAYOUT') AS residual
       FROM payout_lines WHERE tenant_id = $1 GROUP BY payout_reference) s`,
    [tenantId],
  );
  await c.query(
    `INSERT INTO recon_day_stats (tenant_id, provider, day, compared)
     SELECT $1, 'stripe', day, count(*) FROM result WHERE NOT expected GROUP BY day
     ON CONFLICT (tenant_id, provider, day) DO UPDATE SET compared = EXCLUDED.compared, updated_at = now()`,
    [tenantId],
  );
  await c.query(
    `UPDATE recon_runs SET status = 'DONE', finished_at = now(), compared = s.compared, matched = s.matched, theirs_not_ours = $2,
       ours_not_theirs = $3, mismatched = $4, fees_posted = $5, payouts = $6
     FROM (SELECT count(*) FILTER (WHERE NOT expected) AS compared, count(*) FILTER (WHERE bucket = 'MATCHED') AS matched FROM result) s
     WHERE id = $1`,
    [
      runId,
      count("THEIRS_NOT_OURS"),
      count("OURS_NOT_THEIRS"),
      count("MISMATCH"),
      fees,
      Number(statements.rows[0]!.payouts),
    ],
  );
  await c.query("COMMIT");
  await c.end();
  return {
    seconds: (performance.now() - started) / 1000,
    buckets: {
      theirsNotOurs: count("THEIRS_NOT_OURS"),
      oursNotTheirs: count("OURS_NOT_THEIRS"),
      mismatched: count("MISMATCH"),
      feesPosted: fees,
      payouts: Number(statements.rows[0]!.payouts),
      payoutResiduals: Number(statements.rows[0]!.residuals),
    },
  };
}

async function tally(tenantId: string, file: string) {
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
  // The next pass drops this database: no connection of ours may hold it.
  await closeDb();
  if (!r.ok) throw new Error(r.message);
  return {
    seconds,
    buckets: {
      theirsNotOurs: r.value.theirsNotOurs,
      oursNotTheirs: r.value.oursNotTheirs,
      mismatched: r.value.mismatched,
      feesPosted: r.value.feesPosted,
      payouts: r.value.payouts,
      payoutResiduals: r.value.payoutResiduals,
    },
    phasesMs: r.value.phasesMs,
    compareSteps: r.value.compareSteps,
    peakRssMiB: peak / 2 ** 20,
    startRssMiB: startRss / 2 ** 20,
  };
}

type Side = "floor" | "tally";
/** A B B A: each side runs first once and second once, so drift in the machine (a checkpoint, a neighbour) falls on both. */
const ORDER: Side[] = ["floor", "tally", "tally", "floor"];
const SEED_DB = "tally_bench_recon_seed";
const PASS_DB = "tally_bench_recon";

/**
 * Every pass starts from the same state: a copy of the seeded database (CREATE DATABASE
 * … TEMPLATE, a file copy outside the timing), under one name so the product's
 * DATABASE_URL stays the same. Each side commits what it writes, so a pass run on the
 * previous pass's database would find its discrepancies, fees and lines already there.
 */
async function freshCopy(db: BenchDatabase): Promise<string> {
  const c = new pg.Client({ connectionString: db.adminUrl });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${PASS_DB} WITH (FORCE)`);
  const t0 = performance.now();
  await c.query(`CREATE DATABASE ${PASS_DB} TEMPLATE ${SEED_DB} STRATEGY FILE_COPY`);
  await c.end();
  console.log(`  fresh copy of the seeded database (${fmt((performance.now() - t0) / 1000)} s)`);
  return db.url(PASS_DB);
}

async function main(db: BenchDatabase) {
  const dir = benchTempDir("tally-bench-recon-");
  const tenantId = await seedLedger(await db.create(SEED_DB));
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
    `report: ${ROWS.toLocaleString()} lines, ${fmt(statSync(file).size / 2 ** 20)} MiB; expected ${JSON.stringify(expected)}`,
  );
  console.log(`passes in the order ${ORDER.join(", ")}, each on a fresh copy of the seeded database\n`);

  process.env.DATABASE_URL = db.url(PASS_DB);
  const floors: Awaited<ReturnType<typeof baseline>>[] = [];
  const tallies: Awaited<ReturnType<typeof tally>>[] = [];
  const passes: { pass: number; side: Side; seconds: number; buckets: typeof expected }[] = [];
  for (const [i, side] of ORDER.entries()) {
    const url = await freshCopy(db);
    if (side === "floor") {
      const f = await baseline(url, tenantId, file);
      floors.push(f);
      passes.push({ pass: i + 1, side, seconds: f.seconds, buckets: f.buckets });
      console.log(
        `pass ${i + 1} floor: COPY + SQL, the same rows committed  ${fmt(f.seconds, 2).padStart(7)} s   ${JSON.stringify(f.buckets)}`,
      );
    } else {
      const t = await tally(tenantId, file);
      tallies.push(t);
      passes.push({ pass: i + 1, side, seconds: t.seconds, buckets: t.buckets });
      console.log(
        `pass ${i + 1} tally: stream → COPY → compare → cases    ${fmt(t.seconds, 2).padStart(7)} s   ${JSON.stringify(t.buckets)}   peak RSS ${fmt(t.peakRssMiB, 0)} MiB (at start ${fmt(t.startRssMiB, 0)} MiB)`,
      );
      console.log(
        `  phases: stream+COPY ${t.phasesMs.load} ms, compare ${t.phasesMs.compare} ms, fetch ${t.phasesMs.fetch} ms; by step (ms): ${Object.entries(
          t.compareSteps,
        )
          .sort((a, b) => b[1] - a[1])
          .slice(0, 6)
          .map(([k, v]) => `${k}: ${v}`)
          .join("; ")}`,
      );
    }
  }

  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  // Two passes a side: the median of two is their mean, so the ratio of medians is the ratio of sums.
  const baselineSeconds = median(floors.map((f) => f.seconds));
  const tallySeconds = median(tallies.map((t) => t.seconds));
  const ratio = tallySeconds / baselineSeconds;
  const peakRssMiB = Math.max(...tallies.map((t) => t.peakRssMiB));
  const asExpected = (b: typeof expected) => JSON.stringify(b) === JSON.stringify(expected);
  const verdicts = {
    bucketsAsGenerated: tallies.every((t) => asExpected(t.buckets)) && floors.every((f) => asExpected(f.buckets)),
    within1_5xOfFloor: ratio <= 1.5,
    peakUnder512MiB: peakRssMiB < 512,
  };
  console.log(
    `\nmedians: floor ${fmt(baselineSeconds, 2)} s, tally ${fmt(tallySeconds, 2)} s; time tally/floor ${fmt(ratio, 2)}x (sums ${fmt(sum(tallies.map((t) => t.seconds)) / sum(floors.map((f) => f.seconds)), 2)}x); per order: tally second ${fmt(tallies[0]!.seconds / floors[0]!.seconds, 2)}x, tally first ${fmt(tallies[1]!.seconds / floors[1]!.seconds, 2)}x`,
  );
  for (const [name, ok] of Object.entries(verdicts)) console.log(`  ${ok ? "PASS" : "FAIL"}  ${name}`);
  const { phasesMs, compareSteps } = tallies[0]!;
  console.log(
    `saved ${saveResult("recon", { rows: ROWS, order: ORDER, passes, baselineSeconds, tallySeconds, ratio, peakRssMiB, tallies: tallies.map(({ buckets: _b, ...t }) => t), phasesMs, compareSteps, buckets: tallies[0]!.buckets, expected, verdicts })}`,
  );
  if (!Object.values(verdicts).every(Boolean)) process.exitCode = 1;
}

runBench(main, { build: false });
