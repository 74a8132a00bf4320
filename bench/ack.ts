// npm run bench:ack: acknowledgement latency and throughput of the production
// build under load, beside a same-run baseline (bare node:http + pg, same INSERT).
// Targets (issue 2): p99 < 50 ms; throughput >= 50% of the baseline.
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import pg from "pg";
import Stripe from "stripe";
import { aStripePayment } from "@/dev/testing/builders";
import { openLoop, type Delivery, type OpenLoopResult } from "@/bench/open-loop";
import {
  runBench,
  type BenchDatabase,
  startNextFloor,
  fmt,
  freePort,
  runWrk,
  saveResult,
  startProcess,
  startWebApp,
  waitForHttp,
  type WrkResult,
} from "@/bench/support";

const CONCURRENCY = Number(process.env.ACK_CONCURRENCY ?? 32);
const SECONDS = Number(process.env.ACK_SECONDS ?? 8);
const WARMUP_SECONDS = 5;
const MIN_REQUESTS = 2000;
// Open loop (issue #19.3): each rate for this long, a backlog this large for the worker to drain beside it,
// and the whole product (web app + worker) at PRODUCT_RATE for PRODUCT_SECONDS.
const OPEN_SECONDS = Number(process.env.ACK_OPEN_SECONDS ?? 15);
const BACKLOG = Number(process.env.ACK_BACKLOG ?? 50_000);
const PRODUCT_RATE = Number(process.env.ACK_PRODUCT_RATE ?? 400);
const PRODUCT_SECONDS = Number(process.env.ACK_PRODUCT_SECONDS ?? 60);
export const BENCH_SECRET = "whsec_benchmark_secret_0123456789abcdef";

/** Distinct, correctly signed Stripe deliveries, as wrk lines. Signed just before use: the tolerance is 300 s. */
export function signedLines(n = 5000): string[] {
  return Array.from({ length: n }, () => {
    const body = JSON.stringify(aStripePayment());
    return `${Stripe.webhooks.generateTestHeaderString({ payload: body, secret: BENCH_SECRET })}\t${body}`;
  });
}

export async function setupTenant(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query(`INSERT INTO tenants (slug, name) VALUES ('bench', 'Bench') RETURNING id`);
  const tenantId = rows[0].id as string;
  const ep = await c.query(`INSERT INTO provider_endpoints (tenant_id, provider) VALUES ($1, 'stripe') RETURNING id`, [
    tenantId,
  ]);
  await c.query(`INSERT INTO endpoint_secrets (endpoint_id, secret) VALUES ($1, $2)`, [ep.rows[0].id, BENCH_SECRET]);
  await c.end();
  return tenantId;
}

export async function countRawEvents(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const n = Number((await c.query("SELECT count(*) FROM raw_events")).rows[0].count);
  await c.end();
  return n;
}

/** Warm up, then load for SECONDS; checks that every acknowledgement stored exactly one row. */
export async function measureAck(
  label: string,
  url: string,
  dbUrl: string | null,
  concurrency = CONCURRENCY,
): Promise<WrkResult & { concurrency: number; stored: number | null }> {
  runWrk({ url, lines: signedLines(1000), concurrency, seconds: WARMUP_SECONDS });
  const before = dbUrl ? await countRawEvents(dbUrl) : 0;
  const r = runWrk({ url, lines: signedLines(), concurrency, seconds: SECONDS });
  const stored = dbUrl ? (await countRawEvents(dbUrl)) - before : null;
  console.log(
    `${label.padEnd(40)} c=${String(concurrency).padEnd(3)} ${String(r.requests).padStart(6)} req  p50 ${fmt(r.p50).padStart(6)} ms  p90 ${fmt(r.p90).padStart(6)} ms  p99 ${fmt(r.p99).padStart(6)} ms  ${fmt(r.throughput, 0).padStart(5)} req/s  non-2xx ${r.non2xx}  errors ${r.socketErrors}`,
  );
  return { ...r, concurrency, stored };
}

/**
 * No acknowledgement without a stored row: stored >= acknowledged. wrk counts only
 * answers that arrived within its duration, so a few more rows than answers (requests
 * in flight when it stopped) are expected; far more would mean a counting error.
 */
export function everyAckStored(r: WrkResult & { concurrency: number; stored: number | null }): boolean {
  const acks = r.requests - r.non2xx - r.socketErrors;
  return r.non2xx === 0 && r.stored !== null && r.stored >= acks && r.stored <= acks + 2 * r.concurrency;
}

/** A signed Stripe delivery for the open-loop client, signed as it leaves (the tolerance is 300 s). */
export function signedDelivery(path: string): Delivery {
  const body = Buffer.from(JSON.stringify(aStripePayment()));
  return {
    path,
    body,
    headers: {
      "content-type": "application/json",
      "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload: body.toString(), secret: BENCH_SECRET }),
    },
  };
}

/** `n` received, unprocessed Stripe payments, inserted as ingest stores them (the queue trigger enqueues each). */
export async function fillBacklog(url: string, tenantId: string, n: number): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  for (let done = 0; done < n; done += 5000) {
    const bodies = Array.from({ length: Math.min(5000, n - done) }, () =>
      Buffer.from(JSON.stringify(aStripePayment())),
    );
    await c.query(
      `INSERT INTO raw_events (tenant_id, provider, raw_body, headers) SELECT $1, 'stripe', b, '{}' FROM unnest($2::bytea[]) AS b`,
      [tenantId, bodies],
    );
  }
  await c.end();
}

export async function queued(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const n = Number((await c.query("SELECT count(*) FROM raw_event_queue")).rows[0].count);
  await c.end();
  return n;
}

function startWorker(url: string, label: string) {
  return startProcess(
    process.execPath,
    ["--import", "tsx", "workers/worker.ts"],
    { DATABASE_URL: url, TALLY_RECEIPTS_FILE: "/dev/null", TALLY_RECON_SCHEDULE: "off" },
    label,
  );
}

function printOpen(label: string, r: OpenLoopResult): void {
  console.log(
    `${label.padEnd(44)} ${String(r.rate).padStart(5)}/s x ${r.seconds} s  p50 ${fmt(r.p50).padStart(7)} ms  p90 ${fmt(r.p90).padStart(7)} ms  p99 ${fmt(r.p99).padStart(7)} ms  max ${fmt(r.max, 0).padStart(6)} ms  ok ${r.ok}/${r.sent}  non-2xx ${r.non2xx}  errors ${r.errors}  client lag ${fmt(r.maxSendLagMs)} ms`,
  );
}

export async function startBareBaseline(dbUrl: string, tenantId: string) {
  const port = freePort();
  const proc = startProcess(
    path.join("node_modules", ".bin", "tsx"),
    ["bench/bare-ingest-server.ts"],
    { DATABASE_URL: dbUrl, PORT: String(port), BENCH_TENANT_ID: tenantId },
    "bare",
  );
  await waitForHttp(`http://127.0.0.1:${port}/`);
  return { ...proc, base: `http://127.0.0.1:${port}` };
}

/**
 * An OTLP/HTTP collector on loopback that keeps nothing but a count: tracing's cost at
 * the acknowledgement is the span work and its export, measured against a receiver
 * that answers at once (a real collector would be on another machine).
 */
async function startCollector(): Promise<{
  endpoint: string;
  posts: () => number;
  spans: () => Map<string, number>;
  stop: () => Promise<void>;
}> {
  let posts = 0;
  const spans = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/v1/traces") {
        posts++;
        const body = JSON.parse(Buffer.concat(chunks).toString()) as {
          resourceSpans: { scopeSpans: { spans: { name: string }[] }[] }[];
        };
        for (const r of body.resourceSpans)
          for (const scope of r.scopeSpans)
            for (const span of scope.spans) spans.set(span.name, (spans.get(span.name) ?? 0) + 1);
      }
      res.setHeader("content-type", "application/json");
      res.end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts: () => posts,
    spans: () => spans,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function main(db: BenchDatabase) {
  const url = await db.create("tally_bench_ack");
  const tenantId = await setupTenant(url);
  console.log(
    `signed Stripe webhooks, ${CONCURRENCY} concurrent connections, ${SECONDS} s per target after a ${WARMUP_SECONDS} s warm-up (wrk)\n`,
  );

  const path = "/api/webhooks/bench/stripe";
  const bare = await startBareBaseline(url, tenantId);
  const baseline = await measureAck("baseline: node:http + pg INSERT", bare.base + path, url);
  await bare.stop();

  const floorApp = await startNextFloor();
  const floor = await measureAck("reference: Next.js route, no work", `${floorApp.base}/api/ack`, null);
  await floorApp.stop();

  const app = await startWebApp(url);
  const tally = await measureAck("tally: next start, verify + INSERT", app.base + path, url);
  const tallyLight = await measureAck("tally: next start, verify + INSERT", app.base + path, url, 4);

  const open = async (base: string, rate: number, seconds = OPEN_SECONDS) =>
    openLoop({ base, rate, seconds, next: () => signedDelivery(path) });

  // Tracing on (issue #21.5): the same app exporting every acknowledgement's span over OTLP/HTTP,
  // closed loop, then open loop at half the capacity just measured, each beside the same without tracing.
  const collector = await startCollector();
  const tracedApp = await startWebApp(url, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint });
  const traced = await measureAck("tally, tracing on (OTLP export)", tracedApp.base + path, url);
  const tracedLight = await measureAck("tally, tracing on (OTLP export)", tracedApp.base + path, url, 4);
  const halfRate = Math.max(10, Math.round(tally.throughput / 2 / 10) * 10);
  const tracedOpen = await open(tracedApp.base, halfRate);
  printOpen("tally, tracing on (OTLP export)", tracedOpen);
  await tracedApp.stop();
  const untracedOpen = await open(app.base, halfRate);
  printOpen("tally, tracing off", untracedOpen);
  const exports = collector.posts();
  const spanNames = Object.fromEntries(collector.spans());
  await collector.stop();
  console.log(
    `  (the collector received ${exports} OTLP exports: ${Object.entries(spanNames)
      .map(([n, c]) => `${c} ${n}`)
      .join(", ")}; ${traced.requests + tracedLight.requests + tracedOpen.ok} requests timed)`,
  );

  // The acknowledgement must not care how slow the work is: a worker that takes
  // 2 s per event (fault hook) and has a backlog to chew on runs beside it.
  const slowWorker = startProcess(
    process.execPath,
    ["--import", "tsx", "workers/worker.ts"],
    {
      DATABASE_URL: url,
      TALLY_FAULT_WORKER_DELAY_MS: "2000",
      TALLY_RECEIPTS_FILE: "/dev/null",
      TALLY_RECON_SCHEDULE: "off",
    },
    "slow-worker",
  );
  const busyLight = await measureAck("tally, worker busy + 2 s delay", app.base + path, url, 4);
  const busy = await measureAck("tally, worker busy + 2 s delay", app.base + path, url);
  const counter = new pg.Client({ connectionString: url });
  await counter.connect();
  const posted = Number(
    (await counter.query("SELECT count(*) FROM processed_events WHERE status = 'DONE'")).rows[0].count,
  );
  await counter.end();
  await slowWorker.stop();
  await app.stop();
  console.log(`  (the delayed worker posted ${posted} events meanwhile)`);

  // Open loop: constant arrival rates at 25/50/75% of the closed-loop capacity just measured, latency
  // from each request's scheduled time. First the bare baseline at the same rates and at 1,000/s (the
  // client is not the limit if the baseline holds there), then tally with a real worker draining a
  // backlog of BACKLOG events at full speed beside it.
  console.log(`\nopen loop (bench/open-loop.ts), ${OPEN_SECONDS} s per rate, latency from the scheduled send time`);
  const rates = [0.25, 0.5, 0.75].map((f) => Math.max(10, Math.round((tally.throughput * f) / 10) * 10));
  const bareAgain = await startBareBaseline(url, tenantId);
  const bareOpen: OpenLoopResult[] = [];
  for (const rate of [...rates, 1000]) {
    bareOpen.push(await open(bareAgain.base, rate));
    printOpen("baseline: node:http + pg INSERT", bareOpen.at(-1)!);
  }
  await bareAgain.stop();
  await fillBacklog(url, tenantId, BACKLOG);
  const app2 = await startWebApp(url);
  const drainer = startWorker(url, "worker");
  const tallyOpen: OpenLoopResult[] = [];
  for (const rate of rates) {
    tallyOpen.push(await open(app2.base, rate));
    printOpen(`tally, worker draining (${await queued(url)} left)`, tallyOpen.at(-1)!);
  }
  await drainer.stop();
  await app2.stop();

  // The whole product on one machine, as npm start runs it (web app + worker, fresh database):
  // PRODUCT_RATE deliveries/s for PRODUCT_SECONDS, then how long until the queue is empty.
  const productUrl = await db.create("tally_bench_ack_product");
  await setupTenant(productUrl);
  const productApp = await startWebApp(productUrl);
  const productWorker = startWorker(productUrl, "worker");
  const product = await open(productApp.base, PRODUCT_RATE, PRODUCT_SECONDS);
  const stopped = performance.now();
  const left = await queued(productUrl);
  let drainSeconds = 0;
  for (let n = left; n > 0 && drainSeconds < 120; n = await queued(productUrl))
    drainSeconds = await new Promise<number>((r) => setTimeout(() => r((performance.now() - stopped) / 1000), 250));
  printOpen("product: web app + worker, fresh", product);
  console.log(`  queue after the load: ${left} events; empty ${fmt(drainSeconds)} s after it stopped`);
  await productWorker.stop();
  await productApp.stop();
  const atHalf = tallyOpen[1]!;

  const ratio = tally.throughput / baseline.throughput;
  const verdicts = {
    atLeast2000Requests: tally.requests >= MIN_REQUESTS,
    p99Under50ms: tally.p99 < 50,
    // The ack's budget (TALLY_ACK_SLO_MS, 50 ms) at half capacity, open loop, every span exported.
    openLoopP99Under50msWithTracingOn: tracedOpen.p99 < 50 && tracedOpen.ok === tracedOpen.sent && exports > 0,
    throughputAtLeastHalfOfBaseline: ratio >= 0.5,
    everyAckStored:
      everyAckStored(tally) &&
      everyAckStored(tallyLight) &&
      everyAckStored(traced) &&
      everyAckStored(tracedLight) &&
      everyAckStored(busy) &&
      everyAckStored(busyLight),
    ackUnder50msWithSlowWorkerAtC4: busyLight.p99 < 50,
    openLoopP99Under50msAtHalfCapacityWhileDraining: atHalf.p99 < 50 && atHalf.ok === atHalf.sent,
    clientNotTheLimit: bareOpen.at(-1)!.p99 < 50 && bareOpen.at(-1)!.ok === bareOpen.at(-1)!.sent,
    productSustainsRateWithP99Under50ms: product.p99 < 50 && product.ok === product.sent,
    productBacklogEmptyWithin10s: drainSeconds <= 10,
  };
  console.log(
    `\nthroughput: tally/baseline ${fmt(ratio, 2)}x, tally/Next.js floor ${fmt(tally.throughput / floor.throughput, 2)}x, floor/baseline ${fmt(floor.throughput / baseline.throughput, 2)}x`,
  );
  console.log(
    `p99 at c=${CONCURRENCY}: tally/baseline ${fmt(tally.p99 / baseline.p99, 2)}x, tally/floor ${fmt(tally.p99 / floor.p99, 2)}x; p99 at c=4: ${fmt(tallyLight.p99)} ms`,
  );
  console.log(
    `tracing on: throughput ${fmt(traced.throughput / tally.throughput, 2)}x off, p99 at c=${CONCURRENCY} ${fmt(traced.p99)} ms (${fmt(traced.p99 / tally.p99, 2)}x off), at c=4 ${fmt(tracedLight.p99)} ms (${fmt(tracedLight.p99 / tallyLight.p99, 2)}x off), open loop at ${halfRate}/s ${fmt(tracedOpen.p99)} ms (off ${fmt(untracedOpen.p99)} ms)`,
  );
  console.log(
    `with the worker busy and delayed 2 s per event: p99 at c=4 ${fmt(busyLight.p99)} ms (${fmt(busyLight.p99 / tallyLight.p99, 2)}x idle), at c=${CONCURRENCY} ${fmt(busy.p99)} ms (${fmt(busy.p99 / tally.p99, 2)}x idle)`,
  );
  for (const [name, ok] of Object.entries(verdicts)) console.log(`  ${ok ? "PASS" : "FAIL"}  ${name}`);
  console.log(
    `saved ${saveResult("ack", { concurrency: CONCURRENCY, seconds: SECONDS, baseline, floor, tally, tallyAtConcurrency4: tallyLight, tracingOn: { tally: traced, atConcurrency4: tracedLight, openLoop: tracedOpen, openLoopOff: untracedOpen, exports, spanNames }, withSlowWorker: busy, withSlowWorkerAtConcurrency4: busyLight, openLoop: { baseline: bareOpen, tallyWhileDraining: tallyOpen, backlog: BACKLOG }, product: { ...product, queuedAfter: left, drainSeconds }, ratio, verdicts })}`,
  );
  if (!Object.values(verdicts).every(Boolean)) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runBench(main, { build: true });
}
