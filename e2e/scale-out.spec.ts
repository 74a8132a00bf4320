// The deployment shape past one process: two web apps (`next start`) behind a
// real HAProxy, two workers, one PostgreSQL. Web and worker processes keep no
// state of their own, so a day replayed through the balancer must leave the
// true ledger even when one web app is SIGKILLed mid-day and started again:
// HAProxy's health check takes it out, the sender (a provider) retries the
// deliveries that got a 502/503, and ingest absorbs the ones that had already
// been stored. HAProxy comes from Debian's package (.ci/run installs it).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { embeddedUrl } from "../lib/platform/embedded-postgres";
import { createMigratedDatabase, replaySummary, runScript, stopProcess } from "./processes";
import { unique } from "./support";

const dir = mkdtempSync(path.join(os.tmpdir(), "tally-e2e-scale-"));
const pgPort = Number(process.env.TALLY_E2E_PG_PORT);
const database = `tally_scale_${Date.now().toString(36)}`;
const base = 20000 + Math.floor(Math.random() * 20000);
const webPorts = [base, base + 1];
const lbPort = base + 2;
const statsPort = base + 3;
const target = `http://127.0.0.1:${lbPort}`;
const env = {
  ...process.env,
  DATABASE_URL: embeddedUrl(pgPort, database),
  TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: process.env.TALLY_E2E_CERT_PREFIX!,
  TALLY_ALLOW_INSECURE_SIMULATORS: "1",
  TALLY_RECON_SCHEDULE: "off",
  TALLY_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  NEXT_TELEMETRY_DISABLED: "1",
};
const webs: (ChildProcess | undefined)[] = [undefined, undefined];
let haproxy: ChildProcess | undefined;
// Debian installs it in /usr/sbin, which is not on every user's PATH.
const haproxyBin = existsSync("/usr/sbin/haproxy") ? "/usr/sbin/haproxy" : "haproxy";

const run = (script: string, args: string[]) => runScript(env, script, args);

function startWeb(i: number): void {
  webs[i] = spawn(path.join("node_modules", ".bin", "next"), ["start", "-p", String(webPorts[i])], {
    env,
    stdio: "ignore",
  });
}

async function until(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** HAProxy's own view of each web app: state and sessions served (its CSV stats). */
async function backends(): Promise<Map<string, { status: string; served: number }>> {
  const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
  const [header = "", ...rows] = csv.replace(/^# /, "").trim().split("\n");
  const cols = header.split(",");
  const out = new Map<string, { status: string; served: number }>();
  for (const row of rows) {
    const v = row.split(",");
    const get = (name: string) => v[cols.indexOf(name)] ?? "";
    if (get("pxname") === "tally" && get("svname").startsWith("web")) {
      out.set(get("svname"), { status: get("status"), served: Number(get("stot")) });
    }
  }
  return out;
}

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  test.setTimeout(180_000);
  const migrated = await createMigratedDatabase(env, pgPort, database);
  expect(migrated.code, migrated.out).toBe(0);
  startWeb(0);
  startWeb(1);
  const config = path.join(dir, "haproxy.cfg");
  writeFileSync(
    config,
    [
      "global",
      "  maxconn 2000",
      "defaults",
      "  mode http",
      "  timeout connect 2s",
      "  timeout client 30s",
      "  timeout server 30s",
      // A delivery refused by a dying backend goes to the other one; ingest is idempotent, so a retried POST is safe.
      "  retries 2",
      "  option redispatch",
      "frontend stats",
      `  bind 127.0.0.1:${statsPort}`,
      "  stats enable",
      "  stats uri /stats",
      "frontend webhooks",
      `  bind 127.0.0.1:${lbPort}`,
      "  default_backend tally",
      "backend tally",
      "  balance roundrobin",
      "  option httpchk GET /api/health",
      ...webPorts.map((p, i) => `  server web${i} 127.0.0.1:${p} check inter 500 fall 2 rise 2`),
    ].join("\n") + "\n",
  );
  const check = spawnSync(haproxyBin, ["-c", "-f", config], { encoding: "utf8" });
  expect(check.status, check.stdout + check.stderr).toBe(0);
  haproxy = spawn(haproxyBin, ["-db", "-f", config], { stdio: "ignore" });
  await until(
    "both web apps up behind HAProxy",
    async () => [...(await backends()).values()].filter((b) => b.status === "UP").length === 2,
    120_000,
  );
});

test.afterAll(async () => {
  for (const p of [haproxy, ...webs]) await stopProcess(p);
});

test("two web apps behind HAProxy and two workers: a day replayed through the balancer, one web app SIGKILLed and restarted mid-day, leaves the true ledger", async () => {
  // About a minute here; a day that never drains fails at the timeout.
  test.setTimeout(5 * 60_000);
  const file = path.join(dir, "day.ndjson");
  const gen = run("workers/tally.ts", ["day", "generate", "--events", "1500", "--seed", "23", "--out", file]);
  expect(gen.code, gen.out).toBe(0);

  // The replay is synchronous in a child; the kill and restart happen from here while it sends.
  const replay = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "workers/replay.ts",
      ...["--file", file, "--target", target, "--runs", "1", "--workers", "2", "--kill-every", "none"],
      ...["--prefix", unique("so")],
    ],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  replay.stdout!.on("data", (d) => (out += d));
  replay.stderr!.on("data", (d) => (out += d));
  const finished = new Promise<number | null>((r) => replay.once("exit", (code) => r(code)));

  // Mid-day: once web0 has served some of the day, kill it outright and bring it back.
  await until("web0 serving the day", async () => ((await backends()).get("web0")?.served ?? 0) > 200, 120_000);
  webs[0]!.kill("SIGKILL");
  await until("HAProxy to mark web0 down", async () => (await backends()).get("web0")?.status === "DOWN", 30_000);
  // The day keeps flowing through web1 alone while web0 is gone.
  const web1AtKill = (await backends()).get("web1")!.served;
  await until(
    "web1 to take the day alone",
    async () => (await backends()).get("web1")!.served > web1AtKill + 100,
    60_000,
  );
  startWeb(0);
  await until("web0 back up", async () => (await backends()).get("web0")?.status === "UP", 120_000);

  const code = await finished;
  console.log(replaySummary(out));
  expect(out).toContain("VERDICT: identical");
  expect(code).toBe(0);
  const postings = Number(/^run 1: .*postings (\d+),/m.exec(out)?.[1]);
  expect(postings).toBeGreaterThan(0);
});
