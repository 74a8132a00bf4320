// "The test that proves it works", small: a generated day replayed three times
// over real HTTP into the running product while worker processes are SIGKILLed
// at random. And the proof that the replay can fail: with the claim disabled by
// a fault flag, it must report a difference.
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { baseURL, unique } from "./support";

const dir = mkdtempSync(path.join(os.tmpdir(), "tally-e2e-replay-"));
// The product under test runs its embedded PostgreSQL on this port; the CLI finds it there.
const env = { ...process.env, TALLY_PG_PORT: process.env.TALLY_E2E_PG_PORT!, TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: process.env.TALLY_E2E_CERT_PREFIX! };

function run(script: string, args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", script, ...args], { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, out: r.stdout + r.stderr };
}

test.describe.configure({ mode: "serial" });

test("a day replayed three times in random orders, with workers killed at random, leaves an identical ledger", async () => {
  test.setTimeout(15 * 60_000);
  const file = path.join(dir, "day.ndjson");
  const gen = run("workers/tally.ts", ["day", "generate", "--events", "2000", "--seed", "11", "--out", file]);
  expect(gen.code, gen.out).toBe(0);
  const r = run("workers/replay.ts", ["--file", file, "--target", baseURL(), "--runs", "3", "--kill-every", "2000-4000", "--workers", "2", "--prefix", unique("rp")]);
  console.log(r.out.split("\n").filter((l) => /^(run|VERDICT|  -|  ✗)/.test(l)).join("\n"));
  expect(r.out).toContain("VERDICT: identical");
  expect(r.code).toBe(0);
  const kills = [...r.out.matchAll(/^run \d+: .*kills (\d+),/gm)].map((m) => Number(m[1]));
  expect(kills).toHaveLength(3);
  expect(kills.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
});

test("with the claim disabled by a fault flag, the replay reports the double credits and fails", async () => {
  test.setTimeout(10 * 60_000);
  const file = path.join(dir, "faulty.ndjson");
  expect(run("workers/tally.ts", ["day", "generate", "--events", "400", "--seed", "12", "--out", file]).code).toBe(0);
  const r = run("workers/replay.ts", ["--file", file, "--target", baseURL(), "--runs", "2", "--kill-every", "none", "--workers", "2", "--prefix", unique("rf"), "--fault-disable-claim"]);
  expect(r.code, r.out).toBe(1);
  expect(r.out).toContain("VERDICT: DIFFERENT");
  expect(r.out).toMatch(/run 1: \d+ customer balance\(s\) differ from the day's truth/);
  expect(r.out).toMatch(/run 2: ledger differs from run 1 .* posted more than once/);
});
