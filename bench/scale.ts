// npm run bench:scale: does the hot path stay fast when the tables are big?
// Ack latency (wrk, c=4) and claim latency (pickUpReceived batches) on empty
// tables and with SCALE_ROWS (default 10,000,000) rows in raw_events and
// processed_events (raw_events spread over the monthly partitions their ids fall
// in, issue #21.4): two databases on one server, measured in alternating rounds.
// Target (issue 6): no more than 20% slower; the EXPLAIN plans of the hot-path
// queries are printed and must use no sequential scan of a table that has rows.
import pg from "pg";
import { setupTenant, signedLines } from "@/bench/ack";
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
const CHUNK = 1_000_000;

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

/**
 * Claim latency: the pick-up transaction (lock a batch, parse, claim) over a queue
 * of CLAIM_EVENTS fresh RECEIVED events with unique references, so every batch
 * claims for real. Events the ack phase left queued are set aside first, so both
 * databases claim exactly the same kind of work. The first 20 batches warm the
 * connections and are not timed.
 */
async function claimLatency(url: string, tenantId: string): Promise<number[]> {
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
  const times: number[] = [];
  for (let i = 0; i < CLAIM_EVENTS / CLAIM_BATCH; i++) {
    const t0 = performance.now();
    const r = await pickUpReceived(CLAIM_BATCH);
    if (i >= 20) times.push(performance.now() - t0);
    if (r.picked === 0) break;
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
  const admin = await client(db.adminUrl);
  await admin.query("CHECKPOINT");
  await admin.end();
  const apps = { empty: await startWebApp(side.empty.url), full: await startWebApp(side.full.url) };
  console.log(
    `\n${ROUNDS} alternating rounds; each: ack latency at concurrency 4 (wrk, 10 s) and claim latency (${CLAIM_EVENTS / CLAIM_BATCH - 20} timed pick-ups of ${CLAIM_BATCH} events), empty tables vs ${ROWS.toLocaleString()} rows\n`,
  );
  const acks = { empty: [] as WrkResult[], full: [] as WrkResult[] };
  const claims = { empty: [] as number[], full: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (["empty", "full"] as const) : (["full", "empty"] as const);
    for (const which of order) {
      const ack = ackLatency(apps[which].base, round === 0);
      acks[which].push(ack);
      const claim = await claimLatency(side[which].url, tenants[which]);
      claims[which].push(...claim);
      const c = summarise(claim);
      console.log(
        `round ${round + 1} ${which.padEnd(5)}  ack p50 ${fmt(ack.p50).padStart(5)} ms  p99 ${fmt(ack.p99).padStart(5)} ms  ${fmt(ack.throughput, 0).padStart(5)} req/s   claim mean ${fmt(c.mean).padStart(5)} ms  p50 ${fmt(c.p50).padStart(5)} ms  p99 ${fmt(c.p99).padStart(5)} ms`,
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
  };
  console.log(
    `ratios full/empty: ack p50 ${fmt(ratios.ackP50, 2)}x, ack p99 ${fmt(ratios.ackP99, 2)}x, claim mean ${fmt(ratios.claimMean, 2)}x, claim p50 ${fmt(ratios.claimP50, 2)}x\n`,
  );
  const explained = await plans(side.full.url, tenants.full);
  for (const [name, plan] of Object.entries(explained)) console.log(`--- ${name}\n${plan}\n`);
  const verdicts = {
    ackWithin20Percent: ratios.ackP50 <= 1.2,
    claimWithin20Percent: ratios.claimP50 <= 1.2,
    noSequentialScans: (await sequentialScans(side.full.url, explained)).length === 0,
  };
  for (const [name, ok] of Object.entries(verdicts)) console.log(`  ${ok ? "PASS" : "FAIL"}  ${name}`);
  const { closeDb } = await import("@/lib/platform/db");
  await closeDb();
  console.log(
    `saved ${saveResult("scale", { rows: ROWS, rounds: ROUNDS, fillSeconds, ackEmpty, ackFull, claimEmpty, claimFull, ratios, plans: explained, verdicts })}`,
  );
  if (!Object.values(verdicts).every(Boolean)) process.exitCode = 1;
}

runBench(main, { build: true });
