// Issue #17 item 4: a settlement report being parsed must not delay webhook
// acknowledgements served by the same process. A web process of its own
// (dev/testing/web-process.ts: the real webhook and upload routes behind HTTP)
// gets signed webhooks open-loop at a fixed rate (latency measured from each
// request's scheduled send time, so a stalled event loop cannot hide by sending
// late); the ack p99 is measured for 3 s, then while a 5 MiB hostile report (10,000
// columns per row, an unclosed quote on its last row: csv-parse reads all of it
// before refusing) is uploaded to the same process. The upload is refused 4xx
// naming row and column, and the ack p99 during it stays within twice the p99
// before. Why these figures: 20/s, not 50/s, because this 2-core machine, shared
// at load 12-15, could not acknowledge 50/s at all (the queue grew past 1 s before
// any upload). Measured: parsing on the event loop, 143 → 945 ms and 733 → 6974 ms
// (fails); in the report thread, 210 → 165 ms (passes). The bound is relative
// because the machine's own noise moves the baseline p99 from 140 to 730 ms.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { createApiToken } from "@/lib/auth/api-tokens";
import { aStripePayment, aTenant, stripeSignatureHeader, type TestTenant } from "@/dev/testing/builders";
import { startWorkerProcess, type WorkerProcess } from "@/dev/testing/worker-process";

const RATE_PER_SECOND = 20;
const BEFORE_MS = 3000;
const DURING_MIN_MS = 1500;

let tenant: TestTenant;
let token: string;
let dir: string;
let web: WorkerProcess;
const server = { url: "" };

/** Tally's report format padded to 10,000 columns a row, to 5 MiB, with an unclosed quote on the last row. */
function aWideHostileReport(bytes: number): string {
  const extra = 10_000;
  const header = ["reference", "kind", "amount", "currency", "occurred_at"];
  for (let i = 0; i < extra; i++) header.push(`x${i}`);
  const padding = ",".repeat(extra);
  const rows = [header.join(",")];
  let size = rows[0]!.length;
  for (let i = 0; size < bytes; i++) {
    const row = `pi_wide_${i},payment,1.00,USD,2026-12-01T10:00:00Z${padding}`;
    rows.push(row);
    size += row.length + 1;
  }
  rows.push(`pi_wide_last,payment,"1.00,USD,2026-12-01T10:00:00Z${padding}`);
  return `${rows.join("\n")}\n`;
}

beforeAll(async () => {
  tenant = await aTenant();
  const t = await createApiToken({ tenant: tenant.slug, role: "admin" }, SYSTEM_ACTOR);
  if (!t.ok) throw new Error(t.message);
  token = t.value.token;
  dir = mkdtempSync(path.join(os.tmpdir(), "tally-offloop-"));
  web = startWorkerProcess({}, "dev/testing/web-process.ts");
  server.url = String((await web.waitFor("web.listening")).url);
});

afterAll(async () => {
  await web?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const uploadReport = (report: Buffer) =>
  fetch(`${server.url}/api/v1/tenants/${tenant.slug}/reconciliation/uploads?provider=stripe&name=wide.csv`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "text/csv" },
    body: new Uint8Array(report),
  });

type Ack = { scheduled: number; latencyMs: number; status: number };

/** Signed Stripe webhooks sent open-loop at RATE_PER_SECOND until stop() is called. */
function sendWebhooks() {
  const acks: Ack[] = [];
  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  const interval = 1000 / RATE_PER_SECOND;
  let sent = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const send = (scheduled: number) => {
    const body = JSON.stringify(aStripePayment());
    const done = fetch(`${server.url}/api/webhooks/${tenant.slug}/stripe`, {
      method: "POST",
      headers: {
        "stripe-signature": stripeSignatureHeader(body, tenant.stripeSecret),
        "content-type": "application/json",
      },
      body,
    }).then(async (res) => {
      await res.arrayBuffer();
      acks.push({ scheduled, latencyMs: performance.now() - scheduled, status: res.status });
    });
    inFlight.push(done);
  };
  // Every request due by now is sent at once: a late timer shows up as latency, not as a lower rate.
  const tick = () => {
    const now = performance.now();
    while (start + sent * interval <= now) send(start + sent++ * interval);
    if (!stopped) timer = setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
  };
  tick();
  return {
    acks,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(inFlight);
    },
  };
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

describe("a hostile report uploaded while webhooks are acknowledged", () => {
  it("is refused 4xx naming row and column, and the ack p99 during it stays within twice the p99 before", async () => {
    const file = path.join(dir, "wide.csv");
    writeFileSync(file, aWideHostileReport(5 * 1024 * 1024));
    const report = readFileSync(file);
    // Warm-up: the endpoint cache, the connection pools, and the report thread, which a
    // process starts at its first report and keeps (starting it is ~1 s of CPU: report-relay.ts).
    const warm = sendWebhooks();
    expect((await uploadReport(Buffer.from("reference,kind,amount,currency,occurred_at\n"))).status).toBe(422);
    await warm.stop();

    const load = sendWebhooks();
    await new Promise((r) => setTimeout(r, BEFORE_MS));
    // Uploaded again until the window holds enough acknowledgements to judge a p99 (at 20/s,
    // 1.5 s): one upload took 547 ms on an idle machine, 10 samples, too few to say anything.
    const uploadStarted = performance.now();
    const answers: { status: number; body: { error: { code: string; message: string } } }[] = [];
    do {
      const res = await uploadReport(report);
      answers.push({ status: res.status, body: await res.json() });
    } while (performance.now() - uploadStarted < DURING_MIN_MS);
    const uploadEnded = performance.now();
    await load.stop();

    for (const a of answers) {
      expect(a.status, JSON.stringify(a.body)).toBeGreaterThanOrEqual(400);
      expect(a.status).toBeLessThan(500);
      expect(a.body.error.message).toMatch(/row \d+, column \d+: a quoted field is never closed/);
    }
    expect(load.acks.every((a) => a.status === 200)).toBe(true);
    const before = load.acks.filter((a) => a.scheduled < uploadStarted).map((a) => a.latencyMs);
    const during = load.acks
      .filter((a) => a.scheduled >= uploadStarted && a.scheduled < uploadEnded)
      .map((a) => a.latencyMs);
    const figures = {
      uploads: answers.length,
      uploadMs: Math.round(uploadEnded - uploadStarted),
      before: { n: before.length, p99: +p99(before).toFixed(1) },
      during: { n: during.length, p99: +p99(during).toFixed(1) },
    };
    console.log(JSON.stringify(figures));
    expect(before.length).toBeGreaterThan(40);
    expect(during.length).toBeGreaterThan(20);
    expect(figures.during.p99, JSON.stringify(figures)).toBeLessThanOrEqual(2 * figures.before.p99);
  }, 60_000);
});
