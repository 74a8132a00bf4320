// npm run bench:day: end-to-end throughput and drain time of a generated day
// (DAY_EVENTS deliveries, default 100,000) sent over HTTP to the production
// build and worked by 1, 2 and 4 worker replicas, to show how cost grows with
// replicas; and a quarter of the day with one replica, to show how it grows with
// work. The 1-replica run of each size is the baseline its ratios are against.
import path from "node:path";
import {
  benchTempDir,
  runBench,
  type BenchDatabase,
  fmt,
  machine,
  saveResult,
  startReplayTarget,
} from "@/bench/support";
import { generateDay } from "@/dev/simulator/day";
import { writeDayFile } from "@/dev/simulator/day-file";

const EVENTS = Number(process.env.DAY_EVENTS ?? 100_000);
const REPLICAS = (process.env.DAY_REPLICAS ?? "1,2,4").split(",").map(Number);

async function main(db: BenchDatabase) {
  const dir = benchTempDir("tally-bench-day-");
  const app = await startReplayTarget(db, "tally_bench_day");
  const { replay } = await import("@/dev/replay");
  const { closeDb } = await import("@/lib/platform/db");
  const results: Record<string, unknown>[] = [];
  console.log(
    `${machine().cores} cores; deliveries over HTTP at concurrency 32 into next start; workers without kills\n`,
  );
  for (const size of [Math.round(EVENTS / 4), EVENTS]) {
    const file = path.join(dir, `day-${size}.ndjson`);
    const day = generateDay({
      seed: 5,
      events: size,
      tenants: ["alpha", "beta", "gamma"],
      dayStart: Date.UTC(2026, 11, 1) / 1000,
    });
    await writeDayFile(file, day);
    let base: number | null = null;
    for (const workers of size === EVENTS ? REPLICAS : [1]) {
      const r = await replay({
        file,
        target: app.base,
        runs: 1,
        killEvery: null,
        workers,
        concurrency: 32,
        seed: 1,
        tenantPrefix: `d${size}w${workers}`,
        drainTimeoutMs: 3 * 3600_000,
        log: () => undefined,
      });
      const run = r.runs[0]!;
      const totalS = (run.sendMs + run.drainMs) / 1000;
      const perSecond = day.movements.length / totalS;
      base ??= perSecond;
      results.push({
        deliveries: size,
        movements: day.movements.length,
        workers,
        sendSeconds: run.sendMs / 1000,
        drainSeconds: run.drainMs / 1000,
        totalSeconds: totalS,
        postedPerSecond: perSecond,
        deliveriesPerSecond: size / (run.sendMs / 1000),
        ok: r.ok,
        problems: run.problems,
      });
      console.log(
        `${String(size).padStart(7)} deliveries, ${workers} worker(s): send ${fmt(run.sendMs / 1000).padStart(6)} s (${fmt(size / (run.sendMs / 1000), 0)}/s), drain after send ${fmt(run.drainMs / 1000).padStart(6)} s, ${fmt(perSecond, 0).padStart(5)} movements posted/s end to end (${fmt(perSecond / base, 2)}x 1 worker)${r.ok ? "" : `  PROBLEMS: ${run.problems.join("; ")}`}`,
      );
    }
  }
  const one = results.filter((r) => r.workers === 1) as {
    deliveries: number;
    totalSeconds: number;
    movements: number;
  }[];
  if (one.length === 2) {
    const [small, full] = one as [(typeof one)[0], (typeof one)[0]];
    console.log(
      `\nwith 1 worker, 4x the work took ${fmt(full.totalSeconds / small.totalSeconds, 2)}x the time (${fmt((small.totalSeconds * 1000) / small.movements, 2)} → ${fmt((full.totalSeconds * 1000) / full.movements, 2)} ms per movement)`,
    );
  }
  await app.stop();
  await closeDb();
  console.log(`saved ${saveResult("day", { events: EVENTS, results })}`);
}

runBench(main, { build: true });
