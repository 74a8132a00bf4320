// npm run bench:cpu: the acknowledgement wins the CPU (issue #19.4). The product as
// `npm start` runs it (web process + worker, one machine), a backlog already queued
// (a provider replaying after an outage) and deliveries arriving at a constant rate
// beside it (open loop, latency from each request's scheduled time: bench/open-loop.ts).
// Rounds alternate (off, on, on, off) between the worker at the web's priority with
// no back-off (TALLY_WORKER_NICE=0, TALLY_WORKER_ACK_YIELD=0) and as shipped (nice 10,
// backing off while the web process reports acks over TALLY_ACK_SLO_MS). The floor,
// in the same run: the same web process at the same rate with no worker at all, which
// is all an acknowledgement can get from this machine. Each round's web process is warmed
// for WARMUP_SECONDS at the rate before the worker starts. The price is paid in drain
// time: how long after the load the queue is empty, per round.
import pg from "pg";
import { fillBacklog, queued, setupTenant, signedDelivery } from "@/bench/ack";
import { openLoop, type OpenLoopResult } from "@/bench/open-loop";
import { type BenchDatabase, fmt, runBench, saveResult, startProcess, startWebApp } from "@/bench/support";

const RATE = Number(process.env.CPU_RATE ?? 200);
const SECONDS = Number(process.env.CPU_SECONDS ?? 30);
const BACKLOG = Number(process.env.CPU_BACKLOG ?? 20_000);
const DRAIN_LIMIT_S = 300;
const WARMUP_SECONDS = 5;
const PATH = "/api/webhooks/bench/stripe";

type Mode = "off" | "on";
type Round = OpenLoopResult & {
  mode: Mode | "alone";
  queuedAtStop: number;
  postedDuringLoad: number;
  drainSeconds: number | null;
  /** What the active backends of each process were doing, sampled every 50 ms during the load ("CPU": no wait event). */
  waitedOn: Record<string, Record<string, number>>;
};

/**
 * pg_stat_activity every 50 ms: the wait events of the web process's and the worker's
 * active backends (named by application_name), so a stall says whether it is CPU,
 * a lock, or the WAL's flush to disk.
 */
async function sampleWaits(url: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const counts: Record<string, Record<string, number>> = {};
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await c.query<{ app: string; wait: string }>(
        `SELECT application_name AS app, coalesce(wait_event_type || ':' || wait_event, 'CPU') AS wait
           FROM pg_stat_activity WHERE state = 'active' AND application_name IN ('tally-web', 'tally-worker')`,
      );
      for (const { app, wait } of rows) {
        counts[app] ??= {};
        counts[app][wait] = (counts[app][wait] ?? 0) + 1;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      await c.end();
      return counts;
    },
  };
}

const top = (counts: Record<string, number> | undefined, n = 4) =>
  Object.entries(counts ?? {})
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([w, k]) => `${w} ${k}`)
    .join(", ") || "none";

const postedCount = async (url: string) => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const n = Number((await c.query("SELECT count(*) FROM processed_events WHERE status = 'DONE'")).rows[0].count);
  await c.end();
  return n;
};

async function round(db: BenchDatabase, mode: Round["mode"], i: number): Promise<Round> {
  const url = await db.create(`tally_bench_cpu_${i}`);
  const tenantId = await setupTenant(url);
  if (mode !== "alone") await fillBacklog(url, tenantId, BACKLOG);
  const app = await startWebApp(url);
  // Warm, before any worker: a cold web process (JIT, the pool's connections, caches) stalls
  // its first second for seconds, which is not what is measured here.
  await openLoop({ base: app.base, rate: RATE, seconds: WARMUP_SECONDS, next: () => signedDelivery(PATH) });
  const worker =
    mode === "alone"
      ? null
      : startProcess(
          process.execPath,
          ["--import", "tsx", "workers/worker.ts"],
          {
            DATABASE_URL: url,
            TALLY_RECEIPTS_FILE: "/dev/null",
            TALLY_RECON_SCHEDULE: "off",
            ...(mode === "off" ? { TALLY_WORKER_NICE: "0", TALLY_WORKER_ACK_YIELD: "0" } : {}),
          },
          "worker",
        );
  // The load starts once the worker is draining at full speed (the queue is going down).
  if (worker) while ((await queued(url)) > BACKLOG - 500) await new Promise((r) => setTimeout(r, 100));
  const postedBefore = await postedCount(url);
  const waits = await sampleWaits(url);
  const load = await openLoop({ base: app.base, rate: RATE, seconds: SECONDS, next: () => signedDelivery(PATH) });
  const waitedOn = await waits.stop();
  const queuedAtStop = await queued(url);
  const postedDuringLoad = (await postedCount(url)) - postedBefore;
  const stopped = performance.now();
  let drainSeconds: number | null = null;
  if (worker) {
    while ((await queued(url)) > 0 && performance.now() - stopped < DRAIN_LIMIT_S * 1000)
      await new Promise((r) => setTimeout(r, 200));
    drainSeconds = (await queued(url)) === 0 ? (performance.now() - stopped) / 1000 : null;
    await worker.stop();
  }
  await app.stop();
  const r: Round = { mode, ...load, queuedAtStop, postedDuringLoad, drainSeconds, waitedOn };
  console.log(
    `${`round ${i}: ${mode === "alone" ? "web process alone (floor)" : `worker ${mode === "on" ? "yielding (nice 10 + back-off)" : "not yielding (nice 0)"}`}`.padEnd(54)} p50 ${fmt(r.p50).padStart(7)} ms  p99 ${fmt(r.p99).padStart(7)} ms  max ${fmt(r.max, 0).padStart(6)} ms  ok ${r.ok}/${r.sent}  errors ${r.errors}  seconds with a request over 50 ms: ${r.secondsOver50ms.length} (${r.secondsOver50ms.slice(0, 8).join(",")}${r.secondsOver50ms.length > 8 ? ",…" : ""})` +
      (worker
        ? `  posted during the load ${postedDuringLoad} (${fmt(postedDuringLoad / SECONDS, 0)}/s), queue at stop ${queuedAtStop}, empty ${drainSeconds === null ? `not within ${DRAIN_LIMIT_S} s` : `${fmt(drainSeconds)} s`} after`
        : ""),
  );
  console.log(
    `    the web's backends waited on: ${top(waitedOn["tally-web"])}; the worker's: ${top(waitedOn["tally-worker"])}`,
  );
  return r;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(db: BenchDatabase) {
  console.log(
    `open loop at ${RATE} signed Stripe deliveries/s for ${SECONDS} s, beside a worker draining a backlog of ${BACKLOG} (fresh database per round)\n`,
  );
  const alone = await round(db, "alone", 0);
  const rounds: Round[] = [];
  for (const [i, mode] of (["off", "on", "on", "off"] as const).entries()) rounds.push(await round(db, mode, i + 1));
  const of = (mode: Mode) => rounds.filter((r) => r.mode === mode);
  const p99 = (mode: Mode) => median(of(mode).map((r) => r.p99));
  const drain = (mode: Mode) => {
    const d = of(mode).map((r) => r.drainSeconds);
    return d.includes(null) ? null : median(d as number[]);
  };
  const ratioOn = p99("on") / alone.p99;
  const ratioOff = p99("off") / alone.p99;
  console.log(
    `\nack p99 (median of 2 rounds): yielding ${fmt(p99("on"))} ms = ${fmt(ratioOn, 2)}x the web process alone (${fmt(alone.p99)} ms); not yielding ${fmt(p99("off"))} ms = ${fmt(ratioOff, 2)}x`,
  );
  console.log(
    `drain after the load: yielding ${drain("on") === null ? "not within the limit" : `${fmt(drain("on")!)} s`}, not yielding ${drain("off") === null ? "not within the limit" : `${fmt(drain("off")!)} s`}`,
  );
  const verdicts = {
    // The budget the web process signals against (TALLY_ACK_SLO_MS, 50 ms), with the worker draining beside it.
    yieldingP99Under50ms: of("on").every((r) => r.p99 < 50 && r.ok === r.sent),
    yieldingBetterThanNot: p99("on") < p99("off"),
    everyRoundDrained: rounds.every((r) => r.drainSeconds !== null),
  };
  for (const [name, ok] of Object.entries(verdicts)) console.log(`  ${ok ? "PASS" : "FAIL"}  ${name}`);
  console.log(
    `saved ${saveResult("cpu", { rate: RATE, seconds: SECONDS, backlog: BACKLOG, alone, rounds, medians: { on: { p99: p99("on"), drainSeconds: drain("on") }, off: { p99: p99("off"), drainSeconds: drain("off") } }, ratioOn, ratioOff, verdicts })}`,
  );
  if (!Object.values(verdicts).every(Boolean)) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runBench(main, { build: true });
}
