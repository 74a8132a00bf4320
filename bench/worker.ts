// npm run bench:worker: end-to-end throughput (HTTP ingest → claim → DONE →
// receipt delivered) with 1 and 2 worker replicas, beside a same-run baseline:
// the same SQL of claim and commit, run by pg in a tight loop on one connection.
import { spawn } from "node:child_process";
import path from "node:path";
import pg from "pg";
import Stripe from "stripe";
import { aStripePayment } from "@/dev/testing/builders";
import { BENCH_SECRET, setupTenant } from "@/bench/ack";
import { benchTempDir, runBench, type BenchDatabase, fmt, runLoad, saveResult, startWebApp } from "@/bench/support";

const EVENTS = Number(process.env.WORKER_EVENTS ?? 3000);

async function query<T = Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

/** The claim-and-commit SQL of one event, as plain statements on one connection. */
async function baseline(url: string, tenantId: string, n: number): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const clearing = (
    await c.query(
      `INSERT INTO accounts (tenant_id, code, kind) VALUES ($1, 'clearing:stripe', 'PROVIDER_CLEARING') ON CONFLICT (tenant_id, code) DO UPDATE SET code = EXCLUDED.code RETURNING id`,
      [tenantId],
    )
  ).rows[0].id;
  const bodies = Array.from({ length: n }, () => aStripePayment());
  const started = performance.now();
  for (const event of bodies) {
    const body = JSON.stringify(event);
    const raw = (
      await c.query(
        `INSERT INTO raw_events (tenant_id, provider, raw_body, headers) VALUES ($1, 'stripe', $2, '{}') RETURNING id`,
        [tenantId, Buffer.from(body)],
      )
    ).rows[0].id;
    const ref = event.data.object.id;
    await c.query("BEGIN");
    const claim = (
      await c.query(
        `INSERT INTO processed_events (idempotency_key, tenant_id, provider, provider_reference, raw_event_id) VALUES ($1, $2, 'stripe', $3, $4) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id, claim_version`,
        [`${tenantId}:stripe:${ref}`, tenantId, ref, raw],
      )
    ).rows[0];
    await c.query(`UPDATE raw_events SET status = 'CLAIMED' WHERE id = $1`, [raw]);
    await c.query("COMMIT");
    await c.query("BEGIN");
    await c.query(
      `UPDATE processed_events SET status = 'DONE', done_at = now() WHERE id = $1 AND claim_version = $2 AND status = 'CLAIMED'`,
      [claim.id, claim.claim_version],
    );
    const customer = (
      await c.query(
        `INSERT INTO accounts (tenant_id, code, kind) VALUES ($1, $2, 'CUSTOMER') ON CONFLICT (tenant_id, code) DO UPDATE SET code = EXCLUDED.code RETURNING id`,
        [tenantId, "customer:acct_alice"],
      )
    ).rows[0].id;
    const posting = (
      await c.query(
        `INSERT INTO postings (tenant_id, kind, processed_event_id, provider, provider_reference, description, occurred_at) VALUES ($1, 'PAYMENT', $2, 'stripe', $3, 'bench', now()) RETURNING id`,
        [tenantId, claim.id, ref],
      )
    ).rows[0].id;
    await c.query(
      `INSERT INTO ledger_entries (posting_id, account_id, amount, currency) VALUES ($1, $2, 1250, 'USD'), ($1, $3, -1250, 'USD')`,
      [posting, clearing, customer],
    );
    for (const [account, amount] of [
      [clearing, 1250],
      [customer, -1250],
    ]) {
      await c.query(
        `INSERT INTO balances (account_id, currency, amount) VALUES ($1, 'USD', $2) ON CONFLICT (account_id, currency, slot) DO UPDATE SET amount = balances.amount + EXCLUDED.amount`,
        [account, amount],
      );
    }
    await c.query(`UPDATE raw_events SET status = 'DONE', processed_at = now() WHERE id = $1`, [raw]);
    const outbox = (
      await c.query(
        `INSERT INTO outbox (tenant_id, kind, posting_id, payload) VALUES ($1, 'receipt', $2, '{}') RETURNING id`,
        [tenantId, posting],
      )
    ).rows[0].id;
    await c.query("COMMIT");
    await c.query(`UPDATE outbox SET sent_at = now() WHERE id = $1`, [outbox]);
  }
  const seconds = (performance.now() - started) / 1000;
  await c.end();
  return n / seconds;
}

function startWorkers(n: number, url: string): (() => void)[] {
  const receipts = path.join(benchTempDir("tally-bench-receipts-"), "receipts.ndjson");
  return Array.from({ length: n }, () => {
    const child = spawn(process.execPath, ["--import", "tsx", "workers/worker.ts"], {
      env: {
        ...process.env,
        DATABASE_URL: url,
        TALLY_RECEIPTS_FILE: receipts,
        TALLY_WORKER_POLL_MS: "200",
        TALLY_OUTBOX_POLL_MS: "200",
      },
      stdio: "ignore",
    });
    return () => child.kill("SIGTERM");
  });
}

async function endToEnd(
  base: string,
  url: string,
  replicas: number,
): Promise<{ eventsPerSecond: number; seconds: number; ingestSeconds: number }> {
  await query(
    url,
    "TRUNCATE raw_events, processed_events, postings, ledger_entries, balances, outbox RESTART IDENTITY CASCADE",
  );
  const stops = startWorkers(replicas, url);
  await new Promise((r) => setTimeout(r, 3000)); // let the workers start and LISTEN
  const requests = Array.from({ length: EVENTS }, () => {
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
  while (true) {
    const [row] = await query<{ sent: string }>(url, "SELECT count(*) AS sent FROM outbox WHERE sent_at IS NOT NULL");
    if (Number(row?.sent) >= EVENTS) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  for (const stop of stops) stop();
  return { eventsPerSecond: EVENTS / seconds, seconds, ingestSeconds };
}

async function main(db: BenchDatabase) {
  const url = await db.create("tally_bench_worker");
  const tenantId = await setupTenant(url);
  console.log(
    `${EVENTS} distinct signed Stripe payments, ingested over HTTP at concurrency 16, until every receipt is delivered\n`,
  );
  const base = await baseline(url, tenantId, EVENTS);
  console.log(`baseline: same SQL, pg tight loop, 1 connection   ${fmt(base, 0).padStart(6)} events/s`);
  const app = await startWebApp(url);
  const results: Record<string, Awaited<ReturnType<typeof endToEnd>>> = {};
  for (const replicas of [1, 2]) {
    const r = await endToEnd(app.base, url, replicas);
    results[`replicas${replicas}`] = r;
    console.log(
      `tally: ingest → DONE → receipt, ${replicas} worker(s)   ${fmt(r.eventsPerSecond, 0).padStart(6)} events/s   (${fmt(r.seconds)} s; ingest alone ${fmt(r.ingestSeconds)} s)   ratio to baseline ${fmt(r.eventsPerSecond / base, 2)}x`,
    );
  }
  await app.stop();
  console.log(
    `\n2 replicas / 1 replica: ${fmt(results.replicas2!.eventsPerSecond / results.replicas1!.eventsPerSecond, 2)}x`,
  );
  console.log(`saved ${saveResult("worker", { events: EVENTS, baselineEventsPerSecond: base, ...results })}`);
}

runBench(main, { build: true });
