// npm run bench:scale: does the hot path stay fast when the tables are big?
// Ack latency (wrk, c=4), claim latency (pickUpReceived batches), and the commit of
// each pick-up's claims (commitBatch: postings, entries, balances, DONE marks and
// receipts in one transaction) and the outbox dispatch of its receipts, on empty
// tables and with SCALE_ROWS (default 10,000,000) rows in raw_events and
// processed_events (raw_events spread over the monthly partitions their ids fall
// in, issue #21.4) and SCALE_LEDGER_ROWS (default SCALE_ROWS) postings, accounts,
// balances and outbox rows (two ledger entries each, issue #19.3): two databases on
// one server, measured in alternating rounds.
// Target (issue 6): no more than 20% slower; the EXPLAIN plans of the hot-path
// queries are printed and must use no sequential scan of a table that has rows.
// Not part of `npm test` (vitest runs *.test.ts only): it needs wrk and ~30 minutes at 10M.
import pg from "pg";
import { setupTenant, signedLines } from "@/bench/ack";
import type { ReceiptTransport } from "@/lib/pipeline/receipt-transport";
import {
  runBench,
  type BenchDatabase,
  fmt,
  median,
  percentile,
  runWrk,
  saveResult,
  startWebApp,
  type WrkResult,
} from "@/bench/support";

const ROWS = Number(process.env.SCALE_ROWS ?? 10_000_000);
const LEDGER_ROWS = Number(process.env.SCALE_LEDGER_ROWS ?? ROWS);
const CHUNK = 1_000_000;
for (const [name, n] of [
  ["SCALE_ROWS", ROWS],
  ["SCALE_LEDGER_ROWS", LEDGER_ROWS],
] as const)
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name} must be a positive whole number (got "${process.env[name]}")`);

async function client(url: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

type Latency = { mean: number; p50: number; p99: number; samples: number };

function summarise(times: number[]): Latency {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    mean: times.reduce((a, b) => a + b, 0) / times.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    samples: times.length,
  };
}

/** The claim path's module state (config, pool) points at one database at a time. */
async function pointAtDatabase(url: string): Promise<void> {
  const { closeDb } = await import("@/lib/platform/db");
  const { resetConfigForTests } = await import("@/lib/platform/config");
  await closeDb();
  process.env.DATABASE_URL = url;
  resetConfigForTests();
}

const CLAIM_EVENTS = 2000;
const CLAIM_BATCH = 10;

/** Receipts go nowhere: the dispatch's cost in the database is what is measured, not a receiver's. */
const nowhere: ReceiptTransport = { name: "bench:nowhere", send: async () => undefined };

type PipelineTimes = { claim: number[]; commit: number[]; dispatch: number[] };

/**
 * Claim, commit and dispatch latency: per batch, the pick-up transaction (lock a
 * batch, parse, claim), then the worker's commit of its claims (commitBatch: one
 * transaction), then one outbox dispatch of the receipts that commit queued, over a
 * queue of CLAIM_EVENTS fresh RECEIVED events with unique references, so every batch
 * claims, posts and sends for real. Events the ack phase left queued are set aside
 * first, so both databases do exactly the same kind of work. The first 20 batches
 * warm the connections and are not timed.
 */
async function pipelineLatency(url: string, tenantId: string): Promise<PipelineTimes> {
  const c = await client(url);
  const body = JSON.stringify({
    id: "evt_x",
    object: "event",
    type: "payment_intent.succeeded",
    created: 1764547200,
    data: { object: { id: "pi_x", amount_received: 1000, currency: "usd", metadata: { account: "acct_1" } } },
  });
  await c.query(
    `UPDATE raw_events SET status = 'IGNORED', note = 'set aside by bench:scale' WHERE status = 'RECEIVED'`,
  );
  await c.query(
    `INSERT INTO raw_events (tenant_id, provider, raw_body, headers)
    SELECT $1, 'stripe', convert_to(replace($2, 'pi_x', 'pi_scale_' || md5(random()::text || g)), 'UTF8'), '{}' FROM generate_series(1, $3::int) g`,
    [tenantId, body, CLAIM_EVENTS],
  );
  await c.end();
  await pointAtDatabase(url);
  const { pickUpReceived } = await import("@/lib/pipeline/claim");
  const { commitBatch } = await import("@/lib/pipeline/commit");
  const { dispatchOutbox } = await import("@/lib/pipeline/outbox");
  const times: PipelineTimes = { claim: [], commit: [], dispatch: [] };
  for (let i = 0; i < CLAIM_EVENTS / CLAIM_BATCH; i++) {
    const t0 = performance.now();
    const r = await pickUpReceived(CLAIM_BATCH);
    const t1 = performance.now();
    if (r.picked === 0) break;
    const outcomes = await commitBatch(r.claims);
    const t2 = performance.now();
    const sent = await dispatchOutbox(nowhere, CLAIM_BATCH);
    const t3 = performance.now();
    // Every claim must post and every receipt go: a batch that did less would time less work.
    const posted = outcomes.filter((o) => o.kind === "posted").length;
    if (posted !== r.claims.length || sent.sent !== posted)
      throw new Error(
        `batch ${i + 1}: ${r.claims.length} claimed, ${posted} posted, ${sent.sent} receipts sent (${JSON.stringify(
          outcomes.filter((o) => o.kind !== "posted"),
          (_k, v) => (typeof v === "bigint" ? String(v) : v),
        )})`,
      );
    if (i >= 20) {
      times.claim.push(t1 - t0);
      times.commit.push(t2 - t1);
      times.dispatch.push(t3 - t2);
    }
  }
  return times;
}

function ackLatency(base: string, warm: boolean) {
  const url = `${base}/api/webhooks/bench/stripe`;
  if (warm) runWrk({ url, lines: signedLines(1000), concurrency: 4, seconds: 5 });
  return runWrk({ url, lines: signedLines(), concurrency: 4, seconds: 10 });
}

/**
 * ROWS events received one a second up to now (10M: the last 116 days), each in
 * the partition of its month (ids made from received_at, as the ack path makes
 * them from the clock), each with its DONE claim.
 */
async function fill(url: string, tenantId: string): Promise<number> {
  const c = await client(url);
  const started = performance.now();
  await c.query(
    `SELECT tally_create_raw_event_partition(m::date)
       FROM generate_series(date_trunc('month', now() - $1::int * interval '1 second'), now(), interval '1 month') m`,
    [ROWS],
  );
  for (let from = 1; from <= ROWS; from += CHUNK) {
    const to = Math.min(ROWS, from + CHUNK - 1);
    // delivery_id carries the reference to the claim (not indexed: the fill stays as fast as the inserts).
    await c.query(
      `WITH ins AS (
         INSERT INTO raw_events (id, tenant_id, provider, raw_body, headers, delivery_id, status, event_type, received_at, processed_at, attempts)
         SELECT tally_raw_event_id_at(at), $1, 'stripe', convert_to('{"id":"evt_' || g || '","type":"payment_intent.succeeded","data":{"object":{"id":"pi_hist_' || g || '","amount_received":' || (100 + g % 90000) || ',"currency":"usd"}}}', 'UTF8'),
                '{"stripe-signature":"t=1,v1=00"}', 'pi_hist_' || g, 'DONE', 'payment_intent.succeeded', at, now(), 1
           FROM generate_series($2::int, $3::int) g, LATERAL (SELECT now() - (($4::int - g) * interval '1 second') AS at) t
         RETURNING id, delivery_id)
       INSERT INTO processed_events (idempotency_key, tenant_id, provider, provider_reference, raw_event_id, status, claimed_at, done_at)
       SELECT $1::text || ':stripe:' || delivery_id, $1::uuid, 'stripe', delivery_id, id, 'DONE', now(), now() FROM ins`,
      [tenantId, from, to, ROWS],
    );
    process.stdout.write(
      `\r  filled ${to.toLocaleString()} / ${ROWS.toLocaleString()} rows (${fmt((performance.now() - started) / 1000, 0)} s)`,
    );
  }
  process.stdout.write("\n");
  await c.query("VACUUM ANALYZE raw_events");
  await c.query("VACUUM ANALYZE processed_events");
  const parts = await c.query<{ part: string; n: string }>(
    "SELECT tableoid::regclass::text AS part, count(*) AS n FROM raw_events GROUP BY 1 ORDER BY 1",
  );
  console.log(`  rows per partition: ${parts.rows.map((r) => `${r.part} ${Number(r.n).toLocaleString()}`).join(", ")}`);
  await c.end();
  return (performance.now() - started) / 1000;
}

/**
 * LEDGER_ROWS payments posted one a second up to now, as the worker would have posted
 * them: per posting a customer account of its own with its balance, two entries (the
 * clearing account and the customer, summing to zero), and a receipt already sent;
 * the clearing balance is their sum. The ids are given (after whatever is there), so
 * each statement of a chunk knows the rows of the others without joining them.
 */
async function fillLedger(url: string, tenantId: string): Promise<number> {
  const c = await client(url);
  const started = performance.now();
  // Bulk setup only: triggers off for this session. The deferred ledger_entries_balanced
  // check would run once per entry row at commit (20M look-ups of the posting's entries),
  // and the foreign-key triggers once per row; every posting here is balanced by
  // construction (two legs, +a and -a) and every id refers to a row this fill wrote,
  // and both are checked after the fill.
  await c.query("SET session_replication_role = replica");
  const clearing = (
    await c.query(
      `INSERT INTO accounts (tenant_id, code, kind) VALUES ($1, 'clearing:stripe', 'PROVIDER_CLEARING')
       ON CONFLICT (tenant_id, code) DO UPDATE SET code = EXCLUDED.code RETURNING id`,
      [tenantId],
    )
  ).rows[0].id as string;
  const base = (
    await c.query(
      `SELECT (SELECT coalesce(max(id), 0) FROM accounts) AS account, (SELECT coalesce(max(id), 0) FROM postings) AS posting`,
    )
  ).rows[0] as { account: string; posting: string };
  const amount = (g: string) => `(100 + ${g} % 90000)`;
  for (let from = 1; from <= LEDGER_ROWS; from += CHUNK) {
    const to = Math.min(LEDGER_ROWS, from + CHUNK - 1);
    // g runs over the chunk; an account's id is base.account + g, a posting's base.posting + g.
    const span = [from, to, LEDGER_ROWS];
    const at = `now() - ($3::int - g) * interval '1 second'`;
    await c.query("BEGIN");
    await c.query(
      `INSERT INTO accounts (id, tenant_id, code, kind, created_at)
       SELECT $4::bigint + g, $5, 'customer:hist_' || g, 'CUSTOMER', ${at} FROM generate_series($1::int, $2::int) g`,
      [...span, base.account, tenantId],
    );
    await c.query(
      `INSERT INTO postings (id, tenant_id, kind, provider, provider_reference, description, occurred_at, created_at)
       SELECT $4::bigint + g, $5, 'PAYMENT', 'stripe', 'pi_hist_' || g, 'stripe payment pi_hist_' || g, ${at}, ${at}
       FROM generate_series($1::int, $2::int) g`,
      [...span, base.posting, tenantId],
    );
    await c.query(
      `INSERT INTO ledger_entries (posting_id, account_id, amount, currency)
       SELECT $3::bigint + g, leg.account, leg.amount, 'USD' FROM generate_series($1::int, $2::int) g
       CROSS JOIN LATERAL (VALUES ($5::bigint, ${amount("g")}::bigint), ($4::bigint + g, -${amount("g")}::bigint)) leg(account, amount)`,
      [from, to, base.posting, base.account, clearing],
    );
    await c.query(
      `INSERT INTO balances (account_id, currency, slot, amount, updated_at)
       SELECT $4::bigint + g, 'USD', 0, -${amount("g")}, ${at} FROM generate_series($1::int, $2::int) g`,
      [...span, base.account],
    );
    await c.query(
      `INSERT INTO outbox (tenant_id, kind, posting_id, payload, created_at, available_at, attempts, sent_at)
       SELECT $5, 'receipt', $4::bigint + g,
              jsonb_build_object('kind', 'PAYMENT', 'provider', 'stripe', 'reference', 'pi_hist_' || g, 'account', 'customer:hist_' || g,
                                 'amount', ${amount("g")}::text, 'currency', 'USD', 'occurredAt', t.at), t.at, t.at, 1, t.at
       FROM generate_series($1::int, $2::int) g, LATERAL (SELECT ${at} AS at) t`,
      [...span, base.posting, tenantId],
    );
    await c.query("COMMIT");
    process.stdout.write(
      `\r  ledger: filled ${to.toLocaleString()} / ${LEDGER_ROWS.toLocaleString()} postings (${fmt((performance.now() - started) / 1000, 0)} s)`,
    );
  }
  process.stdout.write("\n");
  await c.query(
    `INSERT INTO balances (account_id, currency, slot, amount)
     SELECT $1::bigint, 'USD', 0, sum(100 + g % 90000) FROM generate_series(1, $2::int) g
     ON CONFLICT (account_id, currency, slot) DO UPDATE SET amount = balances.amount + EXCLUDED.amount`,
    [clearing, LEDGER_ROWS],
  );
  // The ids were given, not drawn: the sequences must continue after them.
  for (const table of ["accounts", "postings"])
    await c.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), (SELECT max(id) FROM ${table}))`);
  await c.query("SET session_replication_role = DEFAULT");
  const fillSeconds = (performance.now() - started) / 1000;
  // What the triggers would have refused, checked once over the whole fill: every
  // posting's entries sum to zero, every entry's posting and account exist, and the
  // balances equal the entries.
  const check = (
    await c.query<{ unbalanced: string; orphans: string; off: string }>(
      `SELECT
         (SELECT count(*) FROM (SELECT posting_id FROM ledger_entries GROUP BY posting_id HAVING sum(amount) <> 0) x) AS unbalanced,
         (SELECT count(*) FROM ledger_entries e WHERE NOT EXISTS (SELECT 1 FROM postings p WHERE p.id = e.posting_id)
                                                 OR NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = e.account_id)) AS orphans,
         (SELECT count(*) FROM (SELECT account_id, sum(amount) AS s FROM ledger_entries GROUP BY account_id) e
            FULL JOIN (SELECT account_id, sum(amount) AS s FROM balances GROUP BY account_id) b USING (account_id)
          WHERE e.s IS DISTINCT FROM b.s) AS off`,
    )
  ).rows[0]!;
  if (check.unbalanced !== "0" || check.orphans !== "0" || check.off !== "0")
    throw new Error(`the ledger fill broke an invariant: ${JSON.stringify(check)}`);
  console.log(
    `  ledger checked (${fmt((performance.now() - started) / 1000 - fillSeconds, 0)} s): every posting balanced, no orphan entry, balances = entries`,
  );
  for (const table of ["accounts", "postings", "ledger_entries", "balances", "outbox"])
    await c.query(`VACUUM ANALYZE ${table}`);
  await c.end();
  return fillSeconds;
}

/** The hot-path queries as PostgreSQL plans them, with real execution (inside a rolled-back transaction). */
async function plans(url: string, tenantId: string): Promise<Record<string, string>> {
  const c = await client(url);
  const { queuedSql, pickedRowsSql } = await import("@/lib/pipeline/claim");
  const queue = queuedSql(10);
  // The newest rows stand for what a pick-up takes: a pick-up's ids are the oldest still queued.
  const newest = await c.query<{ id: string }>("SELECT id FROM raw_events ORDER BY id DESC LIMIT 10");
  const rows = pickedRowsSql(newest.rows.map((r) => BigInt(r.id)));
  const explain = async (sql: string, params: unknown[]) => {
    await c.query("BEGIN");
    const r = await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
    await c.query("ROLLBACK");
    return r.rows.map((x) => x["QUERY PLAN"]).join("\n");
  };
  const out = {
    "ingest INSERT": await explain(
      `INSERT INTO raw_events (tenant_id, provider, source, raw_body, headers, delivery_id) VALUES ($1, 'stripe', 'WEBHOOK', $2, '{}', NULL) RETURNING id`,
      [tenantId, Buffer.from("{}")],
    ),
    "pick-up: queue SELECT … FOR UPDATE SKIP LOCKED": await explain(queue.text, queue.values),
    "pick-up: rows SELECT … WHERE id = ANY … FOR UPDATE SKIP LOCKED": await explain(rows.text, rows.values),
    "claim INSERT … ON CONFLICT DO NOTHING": await explain(
      `INSERT INTO processed_events (idempotency_key, tenant_id, provider, provider_reference, raw_event_id) VALUES ($1::text || ':stripe:pi_hist_5', $1::uuid, 'stripe', 'pi_hist_5', (SELECT min(id) FROM raw_events)) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`,
      [tenantId],
    ),
    "outbox dispatch: lease": await explain(
      `UPDATE outbox SET available_at = now() + interval '30 seconds', attempts = attempts + 1
       WHERE id IN (SELECT id FROM outbox WHERE sent_at IS NULL AND dead_at IS NULL AND available_at <= now() ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [],
    ),
    "sweep: stale claims": await explain(
      `SELECT id FROM processed_events WHERE status = 'CLAIMED' AND claimed_at < now() - interval '5 minutes' FOR UPDATE SKIP LOCKED`,
      [],
    ),
    "released claims": await explain(
      `SELECT id FROM processed_events WHERE status = 'CLAIMED' AND claimed_at IS NULL AND (retry_at IS NULL OR retry_at <= now()) ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED`,
      [],
    ),
  };
  await c.end();
  return out;
}

/**
 * The sequential scans in the plans that could read rows. A partition that is
 * empty (a month ahead) has no pages, and PostgreSQL rightly scans it rather than
 * open an index; a scan that never executed read nothing. Both are printed, not counted.
 */
async function sequentialScans(url: string, explained: Record<string, string>): Promise<string[]> {
  const c = await client(url);
  const counted: string[] = [];
  for (const [name, plan] of Object.entries(explained))
    for (const line of plan.split("\n").filter((l) => /Seq Scan on /.test(l))) {
      const table = /Seq Scan on (\S+)/.exec(line)![1]!;
      const { rows } = await c.query<{ n: string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${table} LIMIT 1) x`);
      const harmless = /never executed/.test(line) || rows[0]!.n === "0";
      console.log(
        `  ${harmless ? "not counted" : "COUNTED"}: ${name}: ${line.trim()}${rows[0]!.n === "0" ? " (empty)" : ""}`,
      );
      if (!harmless) counted.push(`${name}: ${line.trim()}`);
    }
  await c.end();
  return counted;
}

const ROUNDS = Number(process.env.SCALE_ROUNDS ?? 4);
if (!Number.isInteger(ROUNDS) || ROUNDS < 2 || ROUNDS % 2 !== 0) {
  throw new Error(
    `SCALE_ROUNDS must be an even number of at least 2 (got "${process.env.SCALE_ROUNDS}"): only even counts of ABBA rounds put each side first as often as second`,
  );
}

/**
 * The empty and the full database live on the same server and are measured in
 * alternating rounds (ABBA…), so drift in the machine (JIT warm-up, checkpoints,
 * a neighbour's load) falls on both sides alike instead of on whichever went last.
 * An even number of rounds keeps the order balanced: with 3 (AB BA AB) the full
 * side went second in two of them, and that run measured ack p50 1.16x where six
 * balanced rounds of ack alone, on the same data, measured 0.97x.
 */
async function main(db: BenchDatabase) {
  const side = {
    empty: { url: await db.create("tally_bench_scale_empty") },
    full: { url: await db.create("tally_bench_scale_full") },
  };
  const tenants = { empty: await setupTenant(side.empty.url), full: await setupTenant(side.full.url) };
  console.log(`filling the full database with ${ROWS.toLocaleString()} rows in raw_events and processed_events`);
  const fillSeconds = await fill(side.full.url, tenants.full);
  console.log(
    `filling it with ${LEDGER_ROWS.toLocaleString()} postings, accounts, balances and sent receipts (${(2 * LEDGER_ROWS).toLocaleString()} ledger entries)`,
  );
  const ledgerFillSeconds = await fillLedger(side.full.url, tenants.full);
  console.log(
    `  ${fmt(ledgerFillSeconds, 0)} s, ${fmt(LEDGER_ROWS / ledgerFillSeconds, 0)} postings/s with their rows`,
  );
  const admin = await client(db.adminUrl);
  await admin.query("CHECKPOINT");
  await admin.end();
  const apps = { empty: await startWebApp(side.empty.url), full: await startWebApp(side.full.url) };
  console.log(
    `\n${ROUNDS} alternating rounds; each: ack latency at concurrency 4 (wrk, 10 s), then ${CLAIM_EVENTS / CLAIM_BATCH - 20} timed batches of ${CLAIM_BATCH} events: pick-up (claim), commitBatch (commit) and one outbox dispatch (dispatch); empty tables vs ${ROWS.toLocaleString()} raw events and ${LEDGER_ROWS.toLocaleString()} postings\n`,
  );
  const acks = { empty: [] as WrkResult[], full: [] as WrkResult[] };
  const claims = { empty: [] as number[], full: [] as number[] };
  const commits = { empty: [] as number[], full: [] as number[] };
  const dispatches = { empty: [] as number[], full: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (["empty", "full"] as const) : (["full", "empty"] as const);
    for (const which of order) {
      const ack = ackLatency(apps[which].base, round === 0);
      acks[which].push(ack);
      const times = await pipelineLatency(side[which].url, tenants[which]);
      claims[which].push(...times.claim);
      commits[which].push(...times.commit);
      dispatches[which].push(...times.dispatch);
      const [c, m, d] = [times.claim, times.commit, times.dispatch].map(summarise) as [Latency, Latency, Latency];
      console.log(
        `round ${round + 1} ${which.padEnd(5)}  ack p50 ${fmt(ack.p50).padStart(5)} ms  p99 ${fmt(ack.p99).padStart(5)} ms  ${fmt(ack.throughput, 0).padStart(5)} req/s   claim p50 ${fmt(c.p50).padStart(5)} ms  p99 ${fmt(c.p99).padStart(5)}   commit p50 ${fmt(m.p50).padStart(5)} ms  p99 ${fmt(m.p99).padStart(5)}   dispatch p50 ${fmt(d.p50).padStart(5)} ms  p99 ${fmt(d.p99).padStart(5)}`,
      );
    }
  }
  await apps.empty.stop();
  await apps.full.stop();
  const ackOf = (rs: WrkResult[]) => ({
    rounds: rs,
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    throughput: median(rs.map((r) => r.throughput)),
  });
  const ackEmpty = ackOf(acks.empty);
  const ackFull = ackOf(acks.full);
  const claimEmpty = summarise(claims.empty);
  const claimFull = summarise(claims.full);
  const commitEmpty = summarise(commits.empty);
  const commitFull = summarise(commits.full);
  const dispatchEmpty = summarise(dispatches.empty);
  const dispatchFull = summarise(dispatches.full);
  console.log(
    `\nempty:     ack p50 ${fmt(ackEmpty.p50)} ms  p99 ${fmt(ackEmpty.p99)} ms  ${fmt(ackEmpty.throughput, 0)} req/s (medians of rounds)   claim mean ${fmt(claimEmpty.mean)} ms  p50 ${fmt(claimEmpty.p50)} ms  p99 ${fmt(claimEmpty.p99)} ms (${claimEmpty.samples} pick-ups)`,
  );
  console.log(
    `${ROWS.toLocaleString()} rows: ack p50 ${fmt(ackFull.p50)} ms  p99 ${fmt(ackFull.p99)} ms  ${fmt(ackFull.throughput, 0)} req/s (medians of rounds)   claim mean ${fmt(claimFull.mean)} ms  p50 ${fmt(claimFull.p50)} ms  p99 ${fmt(claimFull.p99)} ms (${claimFull.samples} pick-ups)`,
  );
  const ratios = {
    ackP50: ackFull.p50 / ackEmpty.p50,
    ackP99: ackFull.p99 / ackEmpty.p99,
    claimMean: claimFull.mean / claimEmpty.mean,
    claimP50: claimFull.p50 / claimEmpty.p50,
    commitMean: commitFull.mean / commitEmpty.mean,
    commitP50: commitFull.p50 / commitEmpty.p50,
    dispatchMean: dispatchFull.mean / dispatchEmpty.mean,
    dispatchP50: dispatchFull.p50 / dispatchEmpty.p50,
  };
  for (const [name, e, f] of [
    ["commit", commitEmpty, commitFull],
    ["dispatch", dispatchEmpty, dispatchFull],
  ] as const)
    console.log(
      `${name.padEnd(8)} (batches of ${CLAIM_BATCH}): empty mean ${fmt(e.mean)} ms  p50 ${fmt(e.p50)} ms  p99 ${fmt(e.p99)} ms;  full mean ${fmt(f.mean)} ms  p50 ${fmt(f.p50)} ms  p99 ${fmt(f.p99)} ms (${f.samples} batches)`,
    );
  console.log(
    `ratios full/empty: ack p50 ${fmt(ratios.ackP50, 2)}x, ack p99 ${fmt(ratios.ackP99, 2)}x, claim mean ${fmt(ratios.claimMean, 2)}x, claim p50 ${fmt(ratios.claimP50, 2)}x, commit mean ${fmt(ratios.commitMean, 2)}x, commit p50 ${fmt(ratios.commitP50, 2)}x, dispatch mean ${fmt(ratios.dispatchMean, 2)}x, dispatch p50 ${fmt(ratios.dispatchP50, 2)}x\n`,
  );
  const explained = await plans(side.full.url, tenants.full);
  for (const [name, plan] of Object.entries(explained)) console.log(`--- ${name}\n${plan}\n`);
  const verdicts = {
    ackWithin20Percent: ratios.ackP50 <= 1.2,
    claimWithin20Percent: ratios.claimP50 <= 1.2,
    commitWithin20Percent: ratios.commitP50 <= 1.2,
    dispatchWithin20Percent: ratios.dispatchP50 <= 1.2,
    noSequentialScans: (await sequentialScans(side.full.url, explained)).length === 0,
  };
  for (const [name, ok] of Object.entries(verdicts)) console.log(`  ${ok ? "PASS" : "FAIL"}  ${name}`);
  const { closeDb } = await import("@/lib/platform/db");
  await closeDb();
  console.log(
    `saved ${saveResult("scale", { rows: ROWS, ledgerRows: LEDGER_ROWS, ledgerEntries: 2 * LEDGER_ROWS, rounds: ROUNDS, fillSeconds, ledgerFillSeconds, ackEmpty, ackFull, claimEmpty, claimFull, commitEmpty, commitFull, dispatchEmpty, dispatchFull, ratios, plans: explained, verdicts })}`,
  );
  if (!Object.values(verdicts).every(Boolean)) process.exitCode = 1;
}

runBench(main, { build: true });
