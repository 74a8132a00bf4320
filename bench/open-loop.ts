// An open-loop load client (issue #19.3): requests leave at a constant arrival
// rate whatever the server does, and each latency is measured from the moment the
// request was SCHEDULED, not from when it was sent. wrk (and any closed loop) only
// sends when an answer came back, so a server that stalls is asked less and its
// stall is missing from the percentiles (coordinated omission). No package checked
// does this with a fixed schedule and scheduled-time latency (autocannon's
// overallRate still waits for a free connection and times from the send), so it is
// written here: ~80 lines over node:http with a keep-alive pool large enough that
// a slow server never makes a request wait for a socket.
import http from "node:http";
import { percentile } from "@/bench/support";

export type OpenLoopResult = {
  rate: number;
  seconds: number;
  sent: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** Answers per second over the schedule's length (equal to the rate when the server keeps up). */
  achieved: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** How late the client itself sent its latest request: above a few ms the client, not the server, is the limit. */
  maxSendLagMs: number;
  /** The seconds of the schedule (from its start) in which some request took over 50 ms: a cold start, or stalls through the run. */
  secondsOver50ms: number[];
};

export type Delivery = { path: string; body: Buffer; headers: Record<string, string> };

/**
 * Sends `rate` requests per second for `seconds` to `base` (each from `next(i)`),
 * waits for every answer (or `timeoutMs`) and returns latencies from the schedule.
 */
export async function openLoop(o: {
  base: string;
  rate: number;
  seconds: number;
  next: (i: number) => Delivery;
  timeoutMs?: number;
}): Promise<OpenLoopResult> {
  const url = new URL(o.base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2048 });
  const total = Math.round(o.rate * o.seconds);
  const interval = 1000 / o.rate;
  const latencies: number[] = [];
  const slowSeconds = new Set<number>();
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let maxSendLagMs = 0;
  const inFlight: Promise<void>[] = [];

  const fire = (d: Delivery, scheduled: number) =>
    new Promise<void>((resolve) => {
      const took = () => {
        const ms = performance.now() - scheduled;
        latencies.push(ms);
        if (ms > 50) slowSeconds.add(Math.floor((scheduled - start) / 1000));
      };
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: d.path,
          method: "POST",
          agent,
          timeout: o.timeoutMs ?? 30_000,
          headers: { ...d.headers, "content-length": String(d.body.length) },
        },
        (res) => {
          res.resume();
          res.on("end", () => {
            took();
            if (res.statusCode && res.statusCode >= 200 && res.statusCode < 300) ok++;
            else non2xx++;
            resolve();
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", () => {
        errors++;
        took();
        resolve();
      });
      req.end(d.body);
    });

  const start = performance.now();
  let i = 0;
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      // Everything whose time has come leaves now, each timed from its own slot.
      while (i < total && start + i * interval <= now) {
        const scheduled = start + i * interval;
        maxSendLagMs = Math.max(maxSendLagMs, now - scheduled);
        inFlight.push(fire(o.next(i), scheduled));
        i++;
      }
      if (i < total) setTimeout(tick, Math.max(0, start + i * interval - performance.now()));
      else done();
    };
    tick();
  });
  await Promise.all(inFlight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    rate: o.rate,
    seconds: o.seconds,
    sent: total,
    ok,
    non2xx,
    errors,
    achieved: ok / o.seconds,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? Number.NaN,
    maxSendLagMs,
    secondsOver50ms: [...slowSeconds].sort((a, b) => a - b),
  };
}
