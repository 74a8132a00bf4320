// The replay proof in CI, with nothing but the replay's own workers taking the
// events (the webhook route behind a real HTTP server): a small day replayed
// three times, each run into an empty ledger, with workers SIGKILLed at random must
// leave identical ledgers equal to the day's truth, and with the claim disabled by a
// fault flag the same replay must fail in every run. The day is adversarial (defects
// planted on purpose, dev/simulator/defects.ts): each run must record the same
// conflicts, held over-refunds and failed events, as the day expects.
import { createServer } from "node:net";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfigForTests } from "@/lib/platform/config";
import { replay } from "@/dev/replay";
import { generateDay } from "@/dev/simulator/day";
import { writeDayFile } from "@/dev/simulator/day-file";
import { startRouteServer } from "@/dev/testing/route-server";

let route: Awaited<ReturnType<typeof startRouteServer>>;
const dir = mkdtempSync(path.join(os.tmpdir(), "tally-replay-test-"));

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  // The route runs in this process and the replay serves PayPal's certificate here:
  // both read the same (test-only) trust setting.
  process.env.TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES = `http://127.0.0.1:${await freePort()}/`;
  resetConfigForTests();
  route = await startRouteServer();
});
afterAll(async () => {
  await route?.close();
  delete process.env.TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES;
  resetConfigForTests();
});

async function dayFile(name: string, events: number, seed: number): Promise<string> {
  const file = path.join(dir, `${name}.ndjson`);
  await writeDayFile(
    file,
    generateDay({
      seed,
      events,
      tenants: ["alpha", "beta"],
      dayStart: Date.UTC(2026, 11, 1) / 1000,
      adversarial: true,
    }),
  );
  return file;
}

const lines: string[] = [];
const base = {
  target: "",
  runs: 3,
  workers: 2,
  concurrency: 16,
  seed: 3,
  drainTimeoutMs: 240_000,
  log: (l: string) => {
    lines.push(l);
    console.log(l);
  },
};

describe("the replay", () => {
  it("replays a day three times in random orders with workers killed at random, and every ledger is identical and true", async () => {
    const r = await replay({
      ...base,
      target: route.url,
      file: await dayFile("day", 1200, 21),
      killEvery: [2000, 4000],
      tenantPrefix: `ok${Date.now().toString(36)}`,
    });
    console.log(lines.filter((l) => l.startsWith("run")).join("\n"));
    expect(r.differences).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.runs).toHaveLength(3);
    expect(new Set(r.runs.map((x) => x.snapshotSha256)).size).toBe(1);
    expect(r.runs.reduce((n, x) => n + x.kills, 0)).toBeGreaterThan(0);
    for (const run of r.runs) {
      // Each run starts from an empty ledger: it posts the whole day itself, absorbing
      // only the day's own retries, and delivers every posting's receipt at least once.
      expect(run.postings).toBe(r.runs[0]!.postings);
      expect(run.receiptsDistinct).toBe(run.postings);
      expect(run.duplicatesAbsorbed).toBeGreaterThan(0);
      expect(run.duplicatesAbsorbed).toBeLessThan(run.accepted / 2);
      // 1,200 deliveries plant one round of each kind: two conflicted keys, one over-refund, four bad amounts.
      expect([run.conflicts, run.held, run.overRefunds]).toEqual([2, 1, 1]);
      expect(run.failed).toBeGreaterThanOrEqual(4);
      expect(run.failed).toBe(r.runs[0]!.failed);
    }
  }, 900_000);

  it("reports the double credits when the claim is disabled by a fault flag", async () => {
    const r = await replay({
      ...base,
      target: route.url,
      file: await dayFile("faulty", 300, 22),
      runs: 2,
      killEvery: null,
      tenantPrefix: `bad${Date.now().toString(36)}`,
      workerEnv: { TALLY_FAULT_DISABLE_CLAIM: "1" },
    });
    expect(r.ok).toBe(false);
    expect(r.differences.some((d) => /^run 1: \d+ customer balance\(s\) differ from the day's truth/.test(d))).toBe(
      true,
    );
    // Run 2 starts from an empty ledger too, so it fails against the truth on its own.
    expect(r.differences.some((d) => /^run 2: \d+ customer balance\(s\) differ from the day's truth/.test(d))).toBe(
      true,
    );
  }, 300_000);
});
