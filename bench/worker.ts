// npm run bench:worker (#19.3): how fast the worker drains a backlog, against a
// floor that writes the same rows as fast as PostgreSQL takes them, in one run.
//
// The backlog: WORKER_BACKLOG distinct Stripe payments already received (stored as
// ingest stores them, no HTTP), spread over WORKER_CUSTOMERS customers, committed
// in one transaction so the workers, started and idle before it, all see it at
// once. Each pass starts from the same empty ledger and measures from that commit
// until the last claim is DONE (movements/s) and until the last receipt is sent.
//
// The floor: for the same events, the same rows (the claim row DONE, the posting, its
// two entries, the balances summed per account, the raw event DONE and off the queue,
// the outbox row, sent) in multi-row statements of FLOOR_BATCH events per
// transaction on FLOOR_CONNECTIONS connections, with the schema's triggers and
// constraints, and no claim protocol: no parsing, no fencing, no pick-up.
//
// Passes alternate: floor, 1 replica, 2 replicas, 2, 1, floor (ratios to the median
// floor). While workers drain, pg_stat_activity is sampled every 50 ms: each active
// backend's wait event, and whether it waits for a lock while writing balances.
//
// The end-to-end figure (HTTP ingest → DONE → receipt) is kept beside it, with
// WORKER_E2E_EVENTS deliveries at concurrency 16.
//
// For a profile: WORKER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") for the
// workers; WORKER_EXPLAIN_MS with BENCH_PG_LOG=1 for the plans of slow statements
// (auto_explain); WORKER_PGSS=1 for pg_stat_statements' totals, against a DATABASE_URL
// server started with it in shared_preload_libraries (the embedded one is not).
import path from "node:path";
import pg from "pg";
import Stripe from "stripe";
import { aStripePayment } from "@/dev/testing/builders";
import { BENCH_SECRET, setupTenant } from "@/bench/ack";
import {
  benchTempDir,
  type BenchDatabase,
  fmt,
  median,
  type Proc,
  runBench,
  runLoad,
  saveResult,
  startProcess,
  startWebApp,
} from "@/bench/support";
import { BALANCE_SLOTS, clearingAccountCode, customerAccountCode } from "@/lib/ledger/postings";

const BACKLOG = Number(process.env.WORKER_BACKLOG ?? 100_000);
const CUSTOMERS = Number(process.env.WORKER_CUSTOMERS ?? 1_000);
const FLOOR_BATCH = Number(process.env.FLOOR_BATCH ?? 1_000);
const FLOOR_CONNECTIONS = Number(process.env.FLOOR_CONNECTIONS ?? 2);
const E2E_EVENTS = Number(process.env.WORKER_E2E_EVENTS ?? 3_000);
const PASSES = (process.env.WORKER_PASSES ?? "floor,1,2,2,1,floor").split(",").filter(Boolean);

type Payment = { body: Buffer; reference: string; account: string; amount: bigint; occurredAt: Date };

function backlogOf(n: number): Payment[] {
  return Array.from({ length: n }, (_, i) => {
    const account = `acct_${String(i % CUSTOMERS).padStart(5, "0")}`;
    const amount = 100 + ((i * 7919) % 100_000);
    const event = aStripePayment({ account, amount });
    return {
      body: Buffer.from(JSON.stringify(event)),
      reference: event.data.object.id,
      account,
      amount: BigInt(amount),
      occurredAt: new Date(event.created * 1000),
    };
  });
}

async function connect(url: string, name = "tally-bench"): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, application_name: name });
  // A connection still open when the bench stops its database (after a failure) must not hide the failure.
  c.on("error", () => undefined);
  await c.connect();
  return c;
}

/** An empty ledger and no events: what every pass starts from. */
async function reset(url: string): Promise<void> {
  const c = await connect(url);
  await c.query(
    "TRUNCATE raw_events, raw_event_queue, processed_events, postings, ledger_entries, balances, outbox, claim_conflicts RESTART IDENTITY CASCADE",
  );
  // No ANALYZE here: statistics of empty tables make every foreign-key check and trigger
  // query a pass start plan a sequential scan and keep it for the session (its RI
  // check on processed_events took 10.5 ms at 13,000 rows: 159 movements/s at 10,000).
  // TRUNCATE leaves the sizes unknown, as on a database just migrated.
  await c.end();
}

/** The backlog, stored as ingest stores it, in one transaction; returns when it is committed (ms clock). */
async function fill(url: string, tenantId: string, backlog: Payment[]): Promise<number> {
  const c = await connect(url);
  await c.query("BEGIN");
  for (let i = 0; i < backlog.length; i += 5_000) {
    await c.query(
      `INSERT INTO raw_events (tenant_id, provider, raw_body, headers) SELECT $1, 'stripe', b, '{}' FROM unnest($2::bytea[]) AS b`,
      [tenantId, backlog.slice(i, i + 5_000).map((p) => p.body)],
    );
  }
  // Told as ingest tells them (lib/pipeline/wake.ts), so idle workers start at once rather than at their next poll.
  await c.query("NOTIFY tally_raw_events");
  await c.query("COMMIT");
  const committed = performance.now();
  await c.end();
  return committed;
}

/**
 * The floor: the same rows for the same events, as fast as PostgreSQL takes them.
 * Raw events are read back by id only to pair them with the payments (ingest's ids).
 */
async function floor(url: string, tenantId: string, backlog: Payment[]): Promise<{ seconds: number }> {
  const c0 = await connect(url);
  const ids = (await c0.query<{ id: string }>("SELECT id FROM raw_events ORDER BY id")).rows.map((r) => r.id);
  await c0.end();
  if (ids.length !== backlog.length) throw new Error(`floor: ${ids.length} raw events for ${backlog.length} payments`);
  const clearing = clearingAccountCode("stripe");
  // The accounts exist before the clock starts (the worker makes its own in its first batches).
  const codes = [clearing, ...new Set(backlog.map((p) => customerAccountCode(p.account)))].sort();
  const a0 = await connect(url);
  const accounts = new Map(
    (
      await a0.query<{ code: string; id: string }>(
        `INSERT INTO accounts (tenant_id, code, kind)
         SELECT $1::uuid, code, CASE WHEN code = $3 THEN 'PROVIDER_CLEARING' ELSE 'CUSTOMER' END::"AccountKind" FROM unnest($2::text[]) AS code
         ON CONFLICT (tenant_id, code) DO UPDATE SET code = EXCLUDED.code RETURNING code, id`,
        [tenantId, codes, clearing],
      )
    ).rows.map((r) => [r.code, r.id]),
  );
  await a0.end();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: FLOOR_CONNECTIONS }, async () => {
      const c = await connect(url);
      while (next < backlog.length) {
        const from = next;
        next += FLOOR_BATCH;
        const batch = backlog.slice(from, from + FLOOR_BATCH);
        const raw = ids.slice(from, from + FLOOR_BATCH);
        await c.query("BEGIN");
        const written = await c.query<{ id: string }>(
          `WITH claims AS (
             INSERT INTO processed_events (idempotency_key, tenant_id, provider, provider_reference, raw_event_id, movement_kind, account, amount, currency, status, done_at)
             SELECT $1::text || ':stripe:' || ref, $1::uuid, 'stripe', ref, raw, 'PAYMENT', acct, amt, 'USD', 'DONE', now()
             FROM unnest($2::text[], $3::bigint[], $4::text[], $5::bigint[]) AS u(ref, raw, acct, amt)
             RETURNING id, provider_reference, amount),
           posting AS (
             INSERT INTO postings (tenant_id, kind, processed_event_id, provider, provider_reference, description, occurred_at)
             SELECT $1::uuid, 'PAYMENT', id, 'stripe', provider_reference, 'Stripe payment ' || provider_reference, $6::timestamptz FROM claims
             RETURNING id, provider_reference),
           entries AS (
             INSERT INTO ledger_entries (posting_id, account_id, amount, currency)
             SELECT p.id, l.account, l.amount, 'USD'
             FROM posting p JOIN unnest($2::text[], $7::bigint[], $5::bigint[]) AS u(ref, customer, amt) ON u.ref = p.provider_reference,
               LATERAL (VALUES ($8::bigint, u.amt), (u.customer, -u.amt)) AS l(account, amount)),
           done AS (
             UPDATE raw_events SET status = 'DONE', processed_at = now(), attempts = attempts + 1, event_type = 'payment_intent.succeeded',
               movement_references = ARRAY[u.ref]
             FROM unnest($3::bigint[], $2::text[]) AS u(id, ref) WHERE raw_events.id = u.id AND raw_events.id = ANY($3::bigint[]))
           INSERT INTO outbox (tenant_id, kind, posting_id, payload)
           SELECT $1::uuid, 'receipt', p.id, jsonb_build_object('kind', 'PAYMENT', 'provider', 'stripe', 'reference', p.provider_reference) FROM posting p
           RETURNING id`,
          [
            tenantId,
            batch.map((p) => p.reference),
            raw,
            batch.map((p) => p.account),
            batch.map((p) => p.amount.toString()),
            batch[0]!.occurredAt,
            batch.map((p) => accounts.get(customerAccountCode(p.account))),
            accounts.get(clearing),
          ],
        );
        // The balances summed per account, once per batch, sorted (as the worker applies them).
        const net = new Map<string, bigint>();
        for (const p of batch) {
          const id = accounts.get(customerAccountCode(p.account))!;
          net.set(id, (net.get(id) ?? 0n) - p.amount);
        }
        const clearingId = accounts.get(clearing)!;
        net.set(
          clearingId,
          batch.reduce((s, p) => s + p.amount, 0n),
        );
        const rows = [...net.entries()].sort((a, b) => (BigInt(a[0]) < BigInt(b[0]) ? -1 : 1));
        await c.query(
          `INSERT INTO balances (account_id, currency, slot, amount, updated_at)
           SELECT a, 'USD', CASE WHEN a = $3 THEN pg_backend_pid() % ${BALANCE_SLOTS} ELSE 0 END, m, now()
           FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS v(a, m, n) ORDER BY n
           ON CONFLICT (account_id, currency, slot) DO UPDATE SET amount = balances.amount + EXCLUDED.amount, updated_at = now()`,
          [rows.map((r) => r[0]), rows.map((r) => r[1].toString()), clearingId],
        );
        await c.query("COMMIT");
        // The receipts delivered: one write per batch, as the dispatcher records them.
        await c.query("UPDATE outbox SET sent_at = now(), attempts = 1 WHERE id = ANY($1::bigint[])", [
          written.rows.map((r) => r.id),
        ]);
      }
      await c.end();
    }),
  );
  return { seconds: (performance.now() - started) / 1000 };
}

/** pg_stat_activity every 50 ms: wait events of the workers' active backends, and lock waits while writing balances. */
function sampleWaits(url: string) {
  let running = true;
  const counts: Record<string, number> = {};
  let samples = 0;
  let balanceLockWaits = 0;
  // What the active backends were running, by the statement's first words.
  const statements: Record<string, number> = {};
  const loop = (async () => {
    const c = await connect(url, "tally-bench-sampler");
    while (running) {
      const { rows } = await c.query<{ wait: string; statement: string; balances: boolean }>(
        `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS wait, regexp_replace(left(query, 90), '\\s+', ' ', 'g') AS statement,
                wait_event_type = 'Lock' AND query ILIKE '%INSERT INTO balances%' AS balances
           FROM pg_stat_activity WHERE state = 'active' AND application_name = 'tally-worker' AND datname = current_database()`,
      );
      samples++;
      for (const r of rows) {
        counts[r.wait] = (counts[r.wait] ?? 0) + 1;
        statements[r.statement] = (statements[r.statement] ?? 0) + 1;
        if (r.balances) balanceLockWaits++;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await c.end();
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { samples, waits: counts, balanceLockWaits, statements };
    },
  };
}

/** `alone`: no web process on the machine, so nothing to yield to; otherwise the worker as shipped (nice, yielding). */
function startWorkers(n: number, url: string, alone = true): Promise<Proc[]> {
  const receipts = path.join(benchTempDir("tally-bench-receipts-"), "receipts.ndjson");
  return Promise.all(
    Array.from({ length: n }, (_, i) => {
      const proc = startProcess(
        process.execPath,
        // WORKER_NODE_ARGS, for a profile: e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
        [...(process.env.WORKER_NODE_ARGS?.split(" ").filter(Boolean) ?? []), "--import", "tsx", "workers/worker.ts"],
        {
          DATABASE_URL: url,
          TALLY_RECEIPTS_FILE: receipts,
          TALLY_RECON_SCHEDULE: "off",
          ...(alone ? { TALLY_WORKER_NICE: "0", TALLY_WORKER_ACK_YIELD: "0" } : {}),
        },
        `worker ${i + 1}`,
      );
      // Ready once it has looked at the (empty) queue: it is then waiting on LISTEN.
      return new Promise<Proc>((resolve, reject) => {
        let seen = "";
        const onData = (d: Buffer) => {
          seen = (seen + d.toString()).slice(-2000);
          if (seen.includes('"worker.ready"')) {
            proc.child.stdout!.off("data", onData);
            resolve(proc);
          }
        };
        proc.child.stdout!.on("data", onData);
        proc.child.once("exit", (code) => reject(new Error(`worker ${i + 1} exited with ${code} before it was ready`)));
      });
    }),
  );
}

/**
 * Whether the backlog is posted and its receipts sent, by index lookups only: counting
 * the rows every 100 ms took 6 ms a time at 20,000 (pg_stat_statements), from the drain it watches.
 */
async function progress(c: pg.Client): Promise<{ posted: boolean; sent: boolean }> {
  const { rows } = await c.query<{ posted: boolean; sent: boolean }>(
    `SELECT NOT EXISTS (SELECT 1 FROM raw_event_queue) AND NOT EXISTS (SELECT 1 FROM processed_events WHERE status = 'CLAIMED') AS posted,
            NOT EXISTS (SELECT 1 FROM outbox WHERE sent_at IS NULL) AS sent`,
  );
  return rows[0]!;
}

type Drain = {
  replicas: number;
  movementsPerSecond: number;
  seconds: number;
  receiptsSeconds: number;
  waits: Record<string, number>;
  samples: number;
  balanceLockWaits: number;
  statements: Record<string, number>;
};

async function drain(url: string, tenantId: string, backlog: Payment[], replicas: number): Promise<Drain> {
  const workers = await startWorkers(replicas, url);
  if (process.env.WORKER_PGSS) {
    const c0 = await connect(url);
    await c0.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()");
    await c0.end();
  }
  const sampler = sampleWaits(url);
  const committed = await fill(url, tenantId, backlog);
  const c = await connect(url);
  let doneAt = 0;
  for (;;) {
    const now = await progress(c);
    if (!doneAt && now.posted) doneAt = performance.now();
    if (doneAt && now.sent) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const sentAt = performance.now();
  const waits = await sampler.stop();
  if (process.env.WORKER_PGSS) {
    const { rows } = await c.query(
      `SELECT calls, round(total_exec_time) AS ms, round(total_plan_time) AS plan_ms, round((total_exec_time/calls)::numeric, 3) AS per, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS q FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25`,
    );
    console.table(rows);
  }
  await c.end();
  await Promise.all(workers.map((w) => w.stop()));
  const seconds = (doneAt - committed) / 1000;
  return {
    replicas,
    movementsPerSecond: backlog.length / seconds,
    seconds,
    receiptsSeconds: (sentAt - committed) / 1000,
    ...waits,
  };
}

/** The ledger a pass left: every payment posted once, balanced, the clearing balance the backlog's sum. */
async function check(url: string, backlog: Payment[]): Promise<string | null> {
  const c = await connect(url);
  const { rows } = await c.query<{ postings: string; entries: string; unbalanced: string; clearing: string }>(
    `SELECT (SELECT count(*) FROM postings) AS postings, (SELECT count(*) FROM ledger_entries) AS entries,
            (SELECT count(*) FROM (SELECT posting_id FROM ledger_entries GROUP BY posting_id HAVING sum(amount) <> 0) u) AS unbalanced,
            (SELECT coalesce(sum(b.amount), 0) FROM balances b JOIN accounts a ON a.id = b.account_id WHERE a.kind = 'PROVIDER_CLEARING') AS clearing`,
  );
  await c.end();
  const r = rows[0]!;
  const sum = backlog.reduce((s, p) => s + p.amount, 0n);
  if (Number(r.postings) !== backlog.length) return `${r.postings} postings for ${backlog.length} payments`;
  if (Number(r.entries) !== 2 * backlog.length) return `${r.entries} entries`;
  if (r.unbalanced !== "0") return `${r.unbalanced} unbalanced postings`;
  if (BigInt(r.clearing) !== sum) return `clearing balance ${r.clearing}, expected ${sum}`;
  return null;
}

async function endToEnd(
  base: string,
  url: string,
): Promise<{ eventsPerSecond: number; seconds: number; ingestSeconds: number }> {
  await reset(url);
  const workers = await startWorkers(1, url, false);
  const requests = Array.from({ length: E2E_EVENTS }, () => {
    const body = JSON.stringify(aStripePayment());
    return {
      url: `${base}/api/webhooks/bench/stripe`,
      init: {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload: body, secret: BENCH_SECRET }),
        },
      },
    };
  });
  const started = performance.now();
  const load = await runLoad(requests, 16);
  const ingestSeconds = (performance.now() - started) / 1000;
  if (load.errors) throw new Error(`${load.errors} deliveries failed`);
  const c = await connect(url);
  for (;;) {
    const now = await progress(c);
    if (now.posted && now.sent) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await c.end();
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(workers.map((w) => w.stop()));
  return { eventsPerSecond: E2E_EVENTS / seconds, seconds, ingestSeconds };
}

const top = (waits: Record<string, number>, n = 5) =>
  Object.entries(waits)
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([w, k]) => `${w} ${k}`)
    .join(", ") || "none";

async function main(db: BenchDatabase) {
  const url = await db.create("tally_bench_worker");
  // For a profile: the plans of statements slower than this go to PostgreSQL's log (BENCH_PG_LOG=1 prints it).
  if (process.env.WORKER_EXPLAIN_MS) {
    const c = await connect(url);
    await c.query(
      `ALTER DATABASE tally_bench_worker SET session_preload_libraries = 'auto_explain'; ALTER DATABASE tally_bench_worker SET auto_explain.log_min_duration = '${Number(process.env.WORKER_EXPLAIN_MS)}ms'; ALTER DATABASE tally_bench_worker SET auto_explain.log_analyze = on; ALTER DATABASE tally_bench_worker SET auto_explain.log_nested_statements = on`,
    );
    await c.end();
  }
  const tenantId = await setupTenant(url);
  const backlog = backlogOf(BACKLOG);
  console.log(
    `a backlog of ${BACKLOG} received Stripe payments over ${CUSTOMERS} customers, no HTTP; passes ${PASSES.join(", ")}\n`,
  );
  const floors: number[] = [];
  const drains: Drain[] = [];
  const failures: string[] = [];
  for (const [i, pass] of PASSES.entries()) {
    await reset(url);
    if (pass === "floor") {
      await fill(url, tenantId, backlog);
      const f = await floor(url, tenantId, backlog);
      const rate = BACKLOG / f.seconds;
      floors.push(rate);
      console.log(
        `pass ${i + 1} floor: the same rows, ${FLOOR_BATCH} events a transaction on ${FLOOR_CONNECTIONS} connections   ${fmt(rate, 0).padStart(7)} movements/s  (${fmt(f.seconds, 2)} s)`,
      );
    } else {
      const d = await drain(url, tenantId, backlog, Number(pass));
      drains.push(d);
      console.log(
        `pass ${i + 1} tally, ${d.replicas} replica(s)   ${fmt(d.movementsPerSecond, 0).padStart(7)} movements/s  (DONE ${fmt(d.seconds, 2)} s, receipts sent ${fmt(d.receiptsSeconds, 2)} s)   waits in ${d.samples} samples: ${top(d.waits)}; lock waits writing balances ${d.balanceLockWaits}`,
      );
      console.log(`    busiest statements: ${top(d.statements, 4)}`);
    }
    const wrong = await check(url, backlog);
    if (wrong) failures.push(`pass ${i + 1} (${pass}): ${wrong}`);
  }
  const floorRate = median(floors);
  const of = (n: number) => median(drains.filter((d) => d.replicas === n).map((d) => d.movementsPerSecond));
  const one = of(1);
  const two = of(2);
  const lockWaits = drains.reduce((s, d) => s + d.balanceLockWaits, 0);
  const verdicts = {
    oneReplicaAtLeast2500: one >= 2500,
    oneReplicaAtLeastHalfTheFloor: one / floorRate >= 0.5,
    twoReplicasAtLeastOne: two / one >= 1.0,
    noLockWaitsOnBalances: lockWaits === 0,
    ledgerAsGenerated: failures.length === 0,
  };
  console.log(
    `\nmedians: floor ${fmt(floorRate, 0)}/s; 1 replica ${fmt(one, 0)}/s (${fmt(one / floorRate, 2)}x the floor); 2 replicas ${fmt(two, 0)}/s (${fmt(two / floorRate, 2)}x the floor, ${fmt(two / one, 2)}x of 1); lock waits writing balances: ${lockWaits}`,
  );
  for (const f of failures) console.log(`WRONG LEDGER ${f}`);

  let e2e: Awaited<ReturnType<typeof endToEnd>> | null = null;
  if (E2E_EVENTS > 0) {
    const app = await startWebApp(url);
    e2e = await endToEnd(app.base, url);
    await app.stop();
    console.log(
      `end to end (HTTP ingest → DONE → receipt, 1 worker, ${E2E_EVENTS} deliveries at c=16): ${fmt(e2e.eventsPerSecond, 0)} events/s (${fmt(e2e.seconds)} s; ingest alone ${fmt(e2e.ingestSeconds)} s)`,
    );
  }
  console.log(`verdicts: ${JSON.stringify(verdicts)}`);
  console.log(
    `saved ${saveResult("worker", { backlog: BACKLOG, customers: CUSTOMERS, floorBatch: FLOOR_BATCH, floorConnections: FLOOR_CONNECTIONS, passes: PASSES, floors, drains, medians: { floor: floorRate, replicas1: one, replicas2: two }, ratios: { replicas1ToFloor: one / floorRate, replicas2ToFloor: two / floorRate, replicas2To1: two / one }, endToEnd: e2e && { events: E2E_EVENTS, ...e2e }, failures, verdicts })}`,
  );
}

// The web app is built only for the end-to-end figure.
runBench(main, { build: E2E_EVENTS > 0 });
