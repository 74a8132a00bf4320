// "The test that proves it works", small: a generated day replayed three times
// over real HTTP into the running product (npm start's own worker takes part)
// while the replay's worker processes are SIGKILLed at random. Its self-test
// (the claim disabled by a fault flag must fail it) is in dev/replay.test.ts,
// where no correct worker can take the events instead of the faulty ones.
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
