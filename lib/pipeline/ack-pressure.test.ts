// The acknowledgement wins the CPU (#19.4), against real processes and PostgreSQL:
// the worker runs below the web process (its threads and its backends), the web
// side says when acknowledgements are over budget, and a worker that hears it
// yields and then drains at full speed once it stops hearing it.
import { readdirSync } from "node:fs";
import os from "node:os";
import pg from "pg";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { aStripePayment, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { deliver } from "@/dev/testing/route";
import { startWorkerProcess, type WorkerProcess } from "@/dev/testing/worker-process";
import {
  ACK_PRESSURE_CHANNEL,
  AckYield,
  ackGauge,
  HOLD_MS,
  judgeTick,
  recordAck,
  startAckPressureSignal,
} from "@/lib/pipeline/ack-pressure";
import { databaseUrl, pool, prisma } from "@/lib/platform/db";

let tenant: TestTenant;
const running: WorkerProcess[] = [];
beforeAll(async () => {
  tenant = await aTenant();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.kill("SIGKILL")));
});

const threadsOf = (pid: number) => readdirSync(`/proc/${pid}/task`).map(Number);

async function backlog(n: number): Promise<void> {
  const bodies = Array.from({ length: n }, () => Buffer.from(JSON.stringify(aStripePayment())));
  await pool().query(
    `INSERT INTO raw_events (tenant_id, provider, raw_body, headers) SELECT $1, 'stripe', b, '{}' FROM unnest($2::bytea[]) AS b`,
    [tenant.id, bodies],
  );
}
const posted = async () => prisma.processedEvent.count({ where: { tenantId: tenant.id, status: "DONE" } });
// The file has its own database: the queue is this test's.
const queued = async () => Number((await pool().query("SELECT count(*) FROM raw_event_queue")).rows[0].count);

describe("the worker's priority", () => {
  it("a worker lowers every one of its threads and its PostgreSQL backends to TALLY_WORKER_NICE", async () => {
    const w = startWorkerProcess({ TALLY_WORKER_NICE: "10" });
    running.push(w);
    await w.waitFor("worker.ready");
    const own = os.getPriority();
    const pid = w.child.pid!;
    const threads = threadsOf(pid);
    expect(threads.length).toBeGreaterThan(1); // V8's and libuv's threads, made before the worker lowered itself
    expect(threads.map((t) => os.getPriority(t))).toEqual(threads.map(() => Math.max(10, own)));

    const { rows } = await pool().query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tally-worker'",
    );
    expect(rows.length).toBeGreaterThan(0);
    // The tests' server is the embedded one, on this machine: its backends are the worker's to lower,
    // each as soon as its connection's first query (pg_backend_pid) has answered.
    await expect
      .poll(async () => {
        const { rows } = await pool().query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tally-worker'",
        );
        return rows.map((r) => os.getPriority(r.pid) === Math.max(10, own));
      })
      .not.toContain(false);
    // The web side's (and this test's) backends are not lowered.
    const mine = (await pool().query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    expect(os.getPriority(mine)).toBe(own);
  });

  it("TALLY_WORKER_NICE=0 leaves the worker where it was started", async () => {
    const w = startWorkerProcess({ TALLY_WORKER_NICE: "0" });
    running.push(w);
    await w.waitFor("worker.ready");
    const own = os.getPriority();
    expect(threadsOf(w.child.pid!).map((t) => os.getPriority(t))).toEqual(threadsOf(w.child.pid!).map(() => own));
    expect(w.lines.map((l) => l.event)).not.toContain("worker.priority");
  });
});

describe("the web side's signal", () => {
  it("every acknowledgement the route gives is counted against the budget", async () => {
    const before = ackGauge().total;
    expect((await deliver(stripeRequest(tenant, aStripePayment()))).status).toBe(200);
    expect(ackGauge().total).toBe(before + 1);
  });

  it("a tick is over budget when more than 1% of its acks are, or when the tick itself came late", () => {
    const budget = 50;
    expect(judgeTick({ over: 0, total: 500 }, 0, budget)).toBe(false);
    expect(judgeTick({ over: 5, total: 500 }, 0, budget)).toBe(false); // exactly 1%: the p99 is within
    expect(judgeTick({ over: 6, total: 500 }, 0, budget)).toBe(true);
    expect(judgeTick({ over: 1, total: 1 }, 0, budget)).toBe(true);
    expect(judgeTick({ over: 0, total: 0 }, budget + 1, budget)).toBe(true);
    expect(judgeTick({ over: 0, total: 0 }, budget, budget)).toBe(false);
  });

  it("acknowledgements over budget reach a listening worker's channel as a NOTIFY; acks within it send nothing", async () => {
    const listener = new pg.Client({ connectionString: databaseUrl() });
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (n) => heard.push(n.payload ?? ""));
    await listener.query(`LISTEN ${ACK_PRESSURE_CHANNEL}`);
    let ticks = 0;
    const stop = startAckPressureSignal({
      everyMs: 50,
      budgetMs: 1000,
      notify: (p) => {
        ticks++;
        void pool().query("SELECT pg_notify($1, $2)", [ACK_PRESSURE_CHANNEL, JSON.stringify(p)]);
      },
    });
    try {
      // Fast acknowledgements for several ticks: no notice. (A budget of seconds here, so a
      // tick late on a loaded test machine is not read as pressure; the lag rule is judged above.)
      for (let i = 0; i < 4; i++) {
        for (let j = 0; j < 50; j++) recordAck(1, 1000);
        await new Promise((r) => setTimeout(r, 60));
      }
      expect(ticks).toBe(0);
      // Slow ones: the next tick says so, on the channel the workers listen to.
      for (let i = 0; i < 10; i++) recordAck(4000, 1000);
      await expect.poll(() => heard.length, { timeout: 5000 }).toBeGreaterThan(0);
      expect(JSON.parse(heard[0]!)).toMatchObject({ over: 10, total: 10 });
    } finally {
      stop();
      await listener.end();
    }
  });
});

describe("the worker's back-off", () => {
  it("while notices come the pause after a pick-up is its work time x1, x2, then x4 (20 ms to 10 s); none HOLD_MS after the last", () => {
    const y = new AckYield();
    expect(y.pauseAfter(0, 100)).toBe(0);
    y.notice(1000);
    expect([1010, 1020, 1030, 1040].map((t) => y.pauseAfter(t, 100))).toEqual([100, 200, 400, 400]);
    expect(y.pauseAfter(1050, 1)).toBe(20); // a short pick-up still lets the web process in
    expect(y.pauseAfter(1060, 4000)).toBe(10_000); // capped (and the worker ends a pause early once notices stop)
    expect(y.yielding(1000 + HOLD_MS)).toBe(true);
    expect(y.yielding(1060 + HOLD_MS + 1)).toBe(false);
    expect(y.pauseAfter(1000 + HOLD_MS + 1, 100)).toBe(0);
    y.notice(5000);
    expect(y.pauseAfter(5001, 100)).toBe(100); // a fresh episode starts at x1 again
  });

  it("a worker that hears the web process's notices gives it most of its time, never stops, and drains at full speed once they stop", async () => {
    const N = 3000;
    await backlog(N);
    const notifier = setInterval(
      () =>
        void pool()
          .query("SELECT pg_notify($1, '{}')", [ACK_PRESSURE_CHANNEL])
          .catch(() => undefined),
      100,
    );
    let stopped = false;
    try {
      const w = startWorkerProcess({ TALLY_WORKER_BATCH: "25", TALLY_RECEIPTS_FILE: "/dev/null" });
      running.push(w);
      await w.waitFor("worker.yielding");
      const from = await posted();
      // Six seconds of notices: a pause is at most 4x the pick-up before it, so the worker works in them.
      await new Promise((r) => setTimeout(r, 6000));
      const during = (await posted()) - from;
      clearInterval(notifier);
      stopped = true;
      const episode = (await w.waitFor("worker.full_speed", 10_000)) as { workedMs: number; pausedMs: number };
      // Measured by the worker around its own sleeps and pick-ups: at least half of its time went to the web process.
      expect(episode.pausedMs / (episode.pausedMs + episode.workedMs)).toBeGreaterThanOrEqual(0.5);
      expect(during).toBeGreaterThan(0); // it never stopped
      // Every event posted (the queue empties at pick-up, before the last batch commits).
      await expect.poll(posted, { timeout: 90_000, interval: 200 }).toBeGreaterThanOrEqual(N);
      expect(await queued()).toBe(0);
      console.log(
        `under notices for 6 s the worker posted ${during} of ${N}, pausing ${episode.pausedMs} ms and working ${episode.workedMs} ms; after them, the rest`,
      );
    } finally {
      if (!stopped) clearInterval(notifier);
    }
  }, 150_000);
});
