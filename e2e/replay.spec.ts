// "The test that proves it works", small: a generated day replayed three times,
// each run into an empty ledger, over real HTTP into the production build while
// the replay's worker processes are SIGKILLed at random. The web app here is
// `next start` on a database of its own with no worker of its own: only the
// replay's workers take the events, so a fault in them cannot be absorbed by a
// correct worker (npm start's would take the events too). Its self-test (the
// claim disabled by a fault flag must fail it) is in dev/replay.test.ts. The day is
// adversarial: each run must also record the day's conflicts, held and failed events.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { embeddedUrl } from "../lib/platform/embedded-postgres";
import { createMigratedDatabase, replaySummary, runScript, stopProcess } from "./processes";
import { unique } from "./support";

const dir = mkdtempSync(path.join(os.tmpdir(), "tally-e2e-replay-"));
const pgPort = Number(process.env.TALLY_E2E_PG_PORT);
const database = `tally_replay_${Date.now().toString(36)}`;
const databaseUrl = embeddedUrl(pgPort, database);
const webPort = 20000 + Math.floor(Math.random() * 20000);
const target = `http://127.0.0.1:${webPort}`;
const env = {
  ...process.env,
  DATABASE_URL: databaseUrl,
  TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: process.env.TALLY_E2E_CERT_PREFIX!,
  TALLY_ALLOW_INSECURE_SIMULATORS: "1",
  TALLY_RECON_SCHEDULE: "off",
  // With DATABASE_URL every process (CLI, web app, the replay and its workers) needs the same key.
  TALLY_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  NEXT_TELEMETRY_DISABLED: "1",
};
let web: ChildProcess | undefined;

const run = (script: string, args: string[]) => runScript(env, script, args);

async function waitForHealth(deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const answered = await fetch(`${target}/api/health`).then(
      (r) => r.status < 500,
      () => false,
    );
    if (answered) return;
    if (web?.exitCode !== null) throw new Error(`next start exited with ${web?.exitCode}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${target} did not come up`);
}

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  test.setTimeout(180_000);
  const migrated = await createMigratedDatabase(env, pgPort, database);
  expect(migrated.code, migrated.out).toBe(0);
  // The build npm start made for the other specs; no worker is started beside it.
  web = spawn(path.join("node_modules", ".bin", "next"), ["start", "-p", String(webPort)], { env, stdio: "ignore" });
  await waitForHealth(Date.now() + 120_000);
});

test.afterAll(() => stopProcess(web));

test("a day replayed three times into empty ledgers, with only the replay's workers (killed at random), leaves identical true ledgers", async () => {
  test.setTimeout(15 * 60_000);
  const file = path.join(dir, "day.ndjson");
  const gen = run("workers/tally.ts", [
    "day",
    "generate",
    "--events",
    "2000",
    "--seed",
    "11",
    "--adversarial",
    "on",
    "--out",
    file,
  ]);
  expect(gen.code, gen.out).toBe(0);
  const args = ["--file", file, "--target", target, "--runs", "3", "--kill-every", "2000-4000", "--workers", "2"];
  const r = run("workers/replay.ts", [...args, "--prefix", unique("rp")]);
  console.log(replaySummary(r.out));
  expect(r.out).toContain("VERDICT: identical");
  expect(r.code).toBe(0);
  const kills = [...r.out.matchAll(/^run \d+: .*kills (\d+),/gm)].map((m) => Number(m[1]));
  expect(kills).toHaveLength(3);
  expect(kills.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  // Nothing but the replay's workers was there to take the events: the web app has none.
  const postings = [...r.out.matchAll(/^run \d+: .*postings (\d+),/gm)].map((m) => Number(m[1]));
  expect(postings).toHaveLength(3);
  expect(new Set(postings).size).toBe(1);
  // The planted defects came to the same outcomes in every run (the verdict checks them against the day).
  const outcomes = [...r.out.matchAll(/^run \d+: .*(conflicts \d+, held \d+, failed \d+) /gm)].map((m) => m[1]);
  expect(outcomes).toHaveLength(3);
  expect(new Set(outcomes).size).toBe(1);
});
