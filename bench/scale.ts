// npm run bench:scale: does the hot path stay fast when the tables are big?
// Ack latency (wrk, c=4) and claim latency (pickUpReceived batches) on empty
// tables, then again with SCALE_ROWS (default 10,000,000) rows in raw_events and
// processed_events. Target (issue 6): no more than 20% slower; the EXPLAIN plans
// of the hot-path queries are printed and must use no sequential scans.
import pg from "pg";
import { BENCH_SECRET, setupTenant, signedLines } from "@/bench/ack";
import { benchDatabase, ensureBuilt, fmt, percentile, runWrk, saveResult, startWebApp } from "@/bench/support";

const ROWS = Number(process.env.SCALE_ROWS ?? 10_000_000);
const CHUNK = 1_000_000;

async function client(url: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

/** Claim latency: the pick-up transaction (lock a batch, parse, claim) over a queue of RECEIVED events. */
async function claimLatency(url: string, tenantId: string): Promise<{ mean: number; p50: number; p99: number; batches: number }> {
  const c = await client(url);
  const body = JSON.stringify({ id: "evt_x", object: "event", type: "payment_intent.succeeded", created: 1764547200, data: { object: { id: "pi_x", amount_received: 1000, currency: "usd", metadata: { account: "acct_1" } } } });
  // 2,000 fresh RECEIVED events with unique references, so every batch claims for real.
  await c.query(`INSERT INTO raw_events (tenant_id, provider, raw_body, headers)
    SELECT $1, 'stripe', convert_to(replace($2, 'pi_x', 'pi_scale_' || md5(random()::text || g)), 'UTF8'), '{}' FROM generate_series(1, 2000) g`, [tenantId, body]);
  await c.end();
  const { pickUpReceived } = await import("@/lib/claim");
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t0 = performance.now();
    const r = await pickUpReceived(10);
    times.push(performance.now() - t0);
    if (r.picked === 0) break;
  }
  const sorted = [...times].sort((a, b) => a - b);
  return { mean: times.reduce((a, b) => a + b, 0) / times.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), batches: times.length };
}

async function ackLatency(base: string) {
  const url = `${base}/api/webhooks/bench/stripe`;
  runWrk({ url, lines: signedLines(1000), concurrency: 4, seconds: 3 });
  return runWrk({ url, lines: signedLines(), concurrency: 4, seconds: 10 });
}

async function fill(url: string, tenantId: string): Promise<number> {
  const c = await client(url);
  const started = performance.now();
  for (let from = 1; from <= ROWS; from += CHUNK) {
    const to = Math.min(ROWS, from + CHUNK - 1);
    await c.query("BEGIN");
    const ids = await c.query(`INSERT INTO raw_events (tenant_id, provider, raw_body, headers, status, event_type, received_at, processed_at, attempts)
      SELECT $1, 'stripe', convert_to('{"id":"evt_' || g || '","type":"payment_intent.succeeded","data":{"object":{"id":"pi_hist_' || g || '","amount_received":' || (100 + g % 90000) || ',"currency":"usd"}}}', 'UTF8'),
             '{"stripe-signature":"t=1,v1=00"}', 'DONE', 'payment_intent.succeeded', now() - (($3::int - g) * interval '1 second'), now(), 1
      FROM generate_series($2::int, $3::int) g RETURNING id`, [tenantId, from, to]);
    const first = ids.rows[0].id;
    await c.query(`INSERT INTO processed_events (idempotency_key, tenant_id, provider, provider_reference, raw_event_id, status, claimed_at, done_at)
      SELECT $1::text || ':stripe:pi_hist_' || g, $1::uuid, 'stripe', 'pi_hist_' || g, $2::bigint + (g - $3::int), 'DONE', now(), now() FROM generate_series($3::int, $4::int) g`, [tenantId, first, from, to]);
    await c.query("COMMIT");
    process.stdout.write(`\r  filled ${to.toLocaleString()} / ${ROWS.toLocaleString()} rows (${fmt((performance.now() - started) / 1000, 0)} s)`);
  }
  process.stdout.write("\n");
  await c.query("VACUUM ANALYZE raw_events");
  await c.query("VACUUM ANALYZE processed_events");
  await c.end();
  return (performance.now() - started) / 1000;
}

/** The hot-path queries as PostgreSQL plans them, with real execution (inside a rolled-back transaction). */
async function plans(url: string, tenantId: string): Promise<Record<string, string>> {
  const c = await client(url);
  const explain = async (sql: string, params: unknown[]) => {
    await c.query("BEGIN");
    const r = await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
    await c.query("ROLLBACK");
    return r.rows.map((x) => x["QUERY PLAN"]).join("\n");
  };
  const out = {
    "ingest INSERT": await explain(`INSERT INTO raw_events (tenant_id, provider, source, raw_body, headers, delivery_id) VALUES ($1, 'stripe', 'WEBHOOK', $2, '{}', NULL) RETURNING id`, [tenantId, Buffer.from("{}")]),
    "pick-up SELECT … FOR UPDATE SKIP LOCKED": await explain(`SELECT id, tenant_id, provider, raw_body, received_at FROM raw_events WHERE status = 'RECEIVED' ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED`, []),
    "claim INSERT … ON CONFLICT DO NOTHING": await explain(`INSERT INTO processed_events (idempotency_key, tenant_id, provider, provider_reference, raw_event_id) VALUES ($1::text || ':stripe:pi_hist_5', $1::uuid, 'stripe', 'pi_hist_5', (SELECT min(id) FROM raw_events)) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`, [tenantId]),
    "sweep: stale claims": await explain(`SELECT id FROM processed_events WHERE status = 'CLAIMED' AND claimed_at < now() - interval '5 minutes' FOR UPDATE SKIP LOCKED`, []),
    "released claims": await explain(`SELECT id FROM processed_events WHERE status = 'CLAIMED' AND claimed_at IS NULL AND (retry_at IS NULL OR retry_at <= now()) ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED`, []),
  };
  await c.end();
  return out;
}

async function main() {
  ensureBuilt();
  const db = await benchDatabase();
  try {
    const url = await db.create("tally_bench_scale");
    process.env.DATABASE_URL = url;
    const tenantId = await setupTenant(url);
    void BENCH_SECRET;
    const app = await startWebApp(url);
    console.log(`ack latency at concurrency 4 (wrk, 10 s) and claim latency (pick-up of 10 events), empty tables vs ${ROWS.toLocaleString()} rows\n`);
    const ackEmpty = await ackLatency(app.base);
    const claimEmpty = await claimLatency(url, tenantId);
    console.log(`empty:     ack p50 ${fmt(ackEmpty.p50)} ms  p99 ${fmt(ackEmpty.p99)} ms  ${fmt(ackEmpty.throughput, 0)} req/s   claim mean ${fmt(claimEmpty.mean)} ms  p50 ${fmt(claimEmpty.p50)} ms  p99 ${fmt(claimEmpty.p99)} ms`);
    const fillSeconds = await fill(url, tenantId);
    const ackFull = await ackLatency(app.base);
    const claimFull = await claimLatency(url, tenantId);
    await app.stop();
    console.log(`${ROWS.toLocaleString()} rows: ack p50 ${fmt(ackFull.p50)} ms  p99 ${fmt(ackFull.p99)} ms  ${fmt(ackFull.throughput, 0)} req/s   claim mean ${fmt(claimFull.mean)} ms  p50 ${fmt(claimFull.p50)} ms  p99 ${fmt(claimFull.p99)} ms`);
    const ratios = { ackP50: ackFull.p50 / ackEmpty.p50, ackP99: ackFull.p99 / ackEmpty.p99, claimMean: claimFull.mean / claimEmpty.mean, claimP50: claimFull.p50 / claimEmpty.p50 };
    console.log(`ratios full/empty: ack p50 ${fmt(ratios.ackP50, 2)}x, ack p99 ${fmt(ratios.ackP99, 2)}x, claim mean ${fmt(ratios.claimMean, 2)}x, claim p50 ${fmt(ratios.claimP50, 2)}x\n`);
    const explained = await plans(url, tenantId);
    for (const [name, plan] of Object.entries(explained)) console.log(`--- ${name}\n${plan}\n`);
    const verdicts = {
      ackWithin20Percent: ratios.ackP50 <= 1.2,
      claimWithin20Percent: ratios.claimP50 <= 1.2,
      noSequentialScans: Object.values(explained).every((p) => !/Seq Scan/.test(p)),
    };
    for (const [name, ok] of Object.entries(verdicts)) console.log(`  ${ok ? "PASS" : "FAIL"}  ${name}`);
    const { closeDb } = await import("@/lib/db");
    await closeDb();
    console.log(`saved ${saveResult("scale", { rows: ROWS, fillSeconds, ackEmpty, ackFull, claimEmpty, claimFull, ratios, plans: explained, verdicts })}`);
    if (!Object.values(verdicts).every(Boolean)) process.exitCode = 1;
  } finally {
    await db.stop();
  }
}

main().then(() => process.exit(process.exitCode ?? 0), (e) => { console.error(e); process.exit(1); });
