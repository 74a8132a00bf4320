// Shared by the benchmarks: a database to measure against, the production web
// app, a closed-loop load generator, and reporting with same-run baselines.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres, type EmbeddedServer } from "@/lib/platform/embedded-postgres";
import { migrate } from "@/lib/platform/migrate";
import { randomBytes } from "node:crypto";

// The benchmarks run the product against DATABASE_URL-style servers, where secrets at rest
// need a key; one per bench run, inherited by every process it starts.
process.env.TALLY_ENCRYPTION_KEY ??= randomBytes(32).toString("base64");

// Every temporary folder a benchmark makes (its PostgreSQL data, day files, receipts),
// removed when the process exits however it ends: a full run of the benchmarks
// otherwise left a data folder of ~100 MB per run in the OS temp directory.
const tempDirs = new Set<string>();
const children = new Set<ChildProcess>();
process.on("exit", () => {
  // A benchmark stopped half-way must not leave a web app or worker running (one stopped
  // replay:day left its next-server serving for an hour).
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder in the OS temp directory, removed when the benchmark exits. */
export function benchTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export type BenchDatabase = {
  adminUrl: string;
  url(db: string): string;
  create(db: string): Promise<string>;
  stop(): Promise<void>;
};

/** DATABASE_URL's server, else a fresh embedded one with durable (default) settings. */
export async function benchDatabase(): Promise<BenchDatabase> {
  let server: EmbeddedServer | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dir = benchTempDir("tally-bench-");
    chmodSync(dir, 0o755);
    server = await startEmbeddedPostgres({
      dataDir: path.join(dir, "pg"),
      port: 30000 + Math.floor(Math.random() * 10000),
      log: process.env.BENCH_PG_LOG ? (l) => console.log(`[pg] ${l}`) : undefined,
    });
    adminUrl = server.url("postgres");
  }
  const url = (db: string) => Object.assign(new URL(adminUrl!), { pathname: `/${db}` }).toString();
  return {
    adminUrl,
    url,
    async create(db) {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await c.query(`CREATE DATABASE ${db}`);
      await c.end();
      await migrate(url(db));
      return url(db);
    },
    stop: async () => server?.stop(),
  };
}

export function ensureBuilt(): void {
  if (existsSync(path.join(process.cwd(), ".next", "BUILD_ID")) && process.env.TALLY_BENCH_SKIP_BUILD) return;
  const r = spawnSync("npm", ["run", "build"], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (r.status !== 0) throw new Error("next build failed");
}

export async function waitForHttp(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not come up within ${timeoutMs} ms`);
}

/**
 * A port for a server the bench starts, below Linux's ephemeral range (32768–60999):
 * from inside it, a port could be taken meanwhile by one of the many client sockets a
 * bench opens (bench:ack once failed so, EADDRINUSE).
 */
export function freePort(): number {
  return 20000 + Math.floor(Math.random() * 12000);
}

export type Proc = { child: ChildProcess; stop(): Promise<void> };

export function startProcess(command: string, args: string[], env: Record<string, string>, label: string): Proc {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let tail = "";
  const keep = (d: Buffer) => {
    tail = (tail + d.toString()).slice(-4000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  child.on("exit", (code, signal) => {
    children.delete(child);
    if (code && code !== 0 && !signal) console.error(`[${label}] exited with ${code}:\n${tail}`);
  });
  return {
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5000).unref();
      }),
  };
}

/** The production web app (next start) against a database. */
export async function startWebApp(
  databaseUrl: string,
  extraEnv: Record<string, string> = {},
): Promise<Proc & { base: string }> {
  const port = freePort();
  // The web process as `npm start` runs it (Next.js's handler in workers/web.ts, which
  // also tells the workers when acknowledgements are over budget), not bare `next start`.
  const proc = startProcess(
    process.execPath,
    ["--import", "tsx", "workers/web.ts"],
    {
      DATABASE_URL: databaseUrl,
      NODE_ENV: "production",
      PORT: String(port),
      NEXT_TELEMETRY_DISABLED: "1",
      ...extraEnv,
    },
    "web",
  );
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/api/health`);
  return { ...proc, base };
}

/**
 * A fresh database and the production web app, set up for replays: the replay
 * serves PayPal's certificate on loopback, so both the product and this process
 * are told to trust it. Import lib/replay only after this (it reads the env).
 */
export async function startReplayTarget(db: BenchDatabase, name: string): Promise<Proc & { base: string }> {
  const url = await db.create(name);
  const certPrefix = `http://127.0.0.1:${freePort()}/`;
  process.env.DATABASE_URL = url;
  process.env.TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES = certPrefix;
  return startWebApp(url, {
    TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: certPrefix,
    TALLY_ALLOW_INSECURE_SIMULATORS: "1",
    TALLY_RECON_SCHEDULE: "off",
  });
}

/** bench/next-floor: a Next.js app whose one route reads the body and answers 200. */
export async function startNextFloor(): Promise<Proc & { base: string }> {
  const dir = path.join("bench", "next-floor");
  if (!existsSync(path.join(dir, ".next", "BUILD_ID"))) {
    const r = spawnSync(path.join("node_modules", ".bin", "next"), ["build", dir], {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    });
    if (r.status !== 0) throw new Error("next build of bench/next-floor failed");
  }
  const port = freePort();
  const proc = startProcess(
    path.join("node_modules", ".bin", "next"),
    ["start", dir, "-p", String(port)],
    { NEXT_TELEMETRY_DISABLED: "1" },
    "floor",
  );
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/`);
  return { ...proc, base };
}

export type LoadResult = {
  requests: number;
  errors: number;
  statuses: Record<number, number>;
  seconds: number;
  throughput: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
};

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The middle of a few round results; of an even count, the mean of the two middle ones (percentile would take the lower). */
export function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!;
}

/** Closed-loop load: `concurrency` clients, each sending its next request when the last one answered. */
export async function runLoad(
  requests: { url: string; init: RequestInit }[],
  concurrency: number,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const r = requests[next++]!;
        const t0 = performance.now();
        try {
          const res = await fetch(r.url, r.init);
          await res.arrayBuffer();
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status !== 200) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: requests.length,
    errors,
    statuses,
    seconds,
    throughput: requests.length / seconds,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? NaN,
  };
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

export function machine() {
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

export function saveResult(name: string, data: unknown): string {
  const dir = path.join(process.cwd(), "bench", "results");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ name, at: new Date().toISOString(), machine: machine(), ...(data as object) }, null, 2)}\n`,
  );
  return file;
}

export type WrkResult = {
  requests: number;
  socketErrors: number;
  non2xx: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  seconds: number;
  throughput: number;
};

/**
 * Load from wrk (C, one thread): on a 2-core machine a Node load generator
 * takes the CPU it is trying to measure. `lines` are "<signature>\t<body>".
 */
export function runWrk(o: {
  url: string;
  lines: string[];
  concurrency: number;
  seconds: number;
  signatureHeader?: string;
}): WrkResult {
  if (spawnSync("wrk", ["--version"]).error) throw new Error("wrk is not installed: apt-get install -y wrk");
  const dir = benchTempDir("tally-wrk-");
  const file = path.join(dir, "requests.tsv");
  writeFileSync(file, `${o.lines.join("\n")}\n`);
  const u = new URL(o.url);
  const r = spawnSync(
    "wrk",
    [
      "-t1",
      `-c${o.concurrency}`,
      `-d${o.seconds}s`,
      "--timeout",
      "10s",
      "-s",
      path.join("bench", "wrk-replay.lua"),
      `${u.protocol}//${u.host}`,
      "--",
      file,
      u.pathname,
      o.signatureHeader ?? "Stripe-Signature",
    ],
    { encoding: "utf8" },
  );
  const line = r.stdout.split("\n").find((l) => l.startsWith("JSON"));
  if (!line) throw new Error(`wrk failed: ${r.stderr || r.stdout}`);
  const parsed = JSON.parse(line.slice(4)) as Omit<WrkResult, "throughput">;
  return { ...parsed, throughput: parsed.requests / parsed.seconds };
}

/**
 * A benchmark's entry point: build first where it runs the built app, then its
 * database server, stopped however the benchmark ends; the process exits with the
 * verdict main left in process.exitCode, or 1 on a throw (npm run bench reads it).
 */
export function runBench(main: (db: BenchDatabase) => Promise<void>, { build }: { build: boolean }): void {
  (async () => {
    if (build) ensureBuilt();
    const db = await benchDatabase();
    // Stopped by Ctrl-C or a supervisor: stop the database first, then exit (which removes the folders).
    for (const signal of ["SIGINT", "SIGTERM"] as const)
      process.once(signal, () => {
        db.stop().finally(() => process.exit(130));
      });
    try {
      await main(db);
    } finally {
      await db.stop();
    }
  })().then(
    () => process.exit(process.exitCode ?? 0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
