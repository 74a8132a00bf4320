// The acknowledgement wins the CPU (issue #19.4). On one machine the web process
// and the worker share the cores, and a provider replaying its backlog after an
// outage sends a burst the worker then has to chew through: with both at equal
// priority the worker's batches (and its PostgreSQL backends) took the CPU the
// acknowledgements needed (200 deliveries/s from a fresh `npm start`: ack p99 17 s).
// Two levers, both on the worker's side, since only the ack has a deadline:
//
//   1. Priority. The worker lowers its own scheduling priority (TALLY_WORKER_NICE,
//      every thread: on Linux a nice value is per thread), and that of its PostgreSQL
//      backends when the server runs on this machine (the embedded default). The
//      kernel then gives the web process the CPU first, whenever it wants it.
//   2. Back-off. The web process tells the workers when its acknowledgements are over
//      their budget (TALLY_ACK_SLO_MS): a NOTIFY on ACK_PRESSURE_CHANNEL (wake.ts), at
//      most one per tick. A worker that hears it pauses between pick-ups (a duty cycle, AckYield), and
//      goes back to full speed a second after the last one. Losing a notice costs only
//      latency, and the work is all still queued: nothing is skipped, only later.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import type pg from "pg";
import type { Log } from "@/lib/platform/log";

export const ACK_PRESSURE_CHANNEL = "tally_ack_pressure";

// ---------------------------------------------------------------- web side

type Gauge = { over: number; total: number };
// On globalThis: the route handlers Next.js compiled and workers/web.ts load this module separately.
const holder = globalThis as typeof globalThis & { __tallyAckGauge?: Gauge };
const gauge = (): Gauge => (holder.__tallyAckGauge ??= { over: 0, total: 0 });

/** One acknowledgement's latency, counted against the budget (called where the histogram is observed). */
export function recordAck(ms: number, budgetMs: number): void {
  const g = gauge();
  g.total++;
  if (ms > budgetMs) g.over++;
}

/** This tick's counts so far (what the next tick will judge). */
export function ackGauge(): Gauge {
  return { ...gauge() };
}

export type Pressure = { over: number; total: number; lagMs: number };

/**
 * Over budget this tick: more than 1% of its acknowledgements took longer than the
 * budget (the p99 is over it), or the tick itself came late by more than the budget
 * (the event loop was held up, so requests are waiting that no latency counts yet).
 */
export function judgeTick(g: Gauge, lagMs: number, budgetMs: number): boolean {
  return g.over > g.total * 0.01 || lagMs > budgetMs;
}

/** Every `everyMs`, judges the last tick and calls `notify` when it was over budget. Returns a stop function. */
export function startAckPressureSignal(o: {
  everyMs: number;
  budgetMs: number;
  notify: (p: Pressure) => void;
}): () => void {
  let last = performance.now();
  // It judges from its start: what was counted before is no tick's.
  Object.assign(gauge(), { over: 0, total: 0 });
  const timer = setInterval(() => {
    const now = performance.now();
    const lagMs = Math.max(0, now - last - o.everyMs);
    last = now;
    const g = gauge();
    const tick = { over: g.over, total: g.total };
    g.over = 0;
    g.total = 0;
    if (judgeTick(tick, lagMs, o.budgetMs)) o.notify({ ...tick, lagMs: Math.round(lagMs) });
  }, o.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

// ---------------------------------------------------------------- worker side

/** How long one notice holds the worker back: several ticks of the web's signal. */
export const HOLD_MS = 1000;
const MAX_FACTOR = 4;
const MIN_PAUSE_MS = 20;
const MAX_PAUSE_MS = 10_000;

/**
 * The worker's back-off, a duty cycle: while notices keep coming, after each pick-up
 * it pauses for as long as that pick-up worked, then twice, then four times as long
 * (20 ms to 10 s; a pause ends early once the notices stop). So it gives the web
 * process at least half and then up to four fifths of its own time, yet never stops: a pressure the worker cannot relieve
 * (a slow disk, ingest alone saturating the machine) leaves it a fifth of its speed,
 * not a backlog that only grows. Batches keep their size: smaller ones would cost more
 * CPU per event. HOLD_MS after the last notice it is back to full speed.
 */
export class AckYield {
  private lastNoticeAt = Number.NEGATIVE_INFINITY;
  private factor = 0;
  // While yielding: the time it worked and paused, logged when it is back to full speed.
  private episode: { workedMs: number; pausedMs: number } | null = null;

  notice(now: number): void {
    this.lastNoticeAt = now;
  }

  /** Still told to yield: a notice within HOLD_MS. */
  yielding(now: number): boolean {
    return now - this.lastNoticeAt <= HOLD_MS;
  }

  /** After a pick-up that worked `workedMs`: how long to pause before the next one. */
  pauseAfter(now: number, workedMs: number): number {
    if (!this.yielding(now)) {
      this.factor = 0;
      return 0;
    }
    this.factor = Math.min(MAX_FACTOR, Math.max(1, this.factor * 2));
    return Math.min(MAX_PAUSE_MS, Math.max(MIN_PAUSE_MS, workedMs * this.factor));
  }

  /**
   * Called by the worker's loop after each pick-up (`work` events, taking `workedMs`):
   * pauses as the duty cycle says, in steps so that the pause ends as soon as the
   * notices stop. Logs the episode's start, and its worked and paused time at its end.
   * Returns the milliseconds it paused.
   */
  async afterPickUp(
    work: number,
    workedMs: number,
    o: { signal: AbortSignal; sleep: (ms: number, signal: AbortSignal) => Promise<void>; log: Log },
  ): Promise<number> {
    const pauseMs = work > 0 ? this.pauseAfter(performance.now(), workedMs) : 0;
    if (pauseMs === 0) {
      if (this.episode)
        o.log("worker.full_speed", {
          workedMs: Math.round(this.episode.workedMs),
          pausedMs: Math.round(this.episode.pausedMs),
        });
      this.episode = null;
      return 0;
    }
    if (!this.episode) o.log("worker.yielding", { to: "acknowledgements" });
    this.episode ??= { workedMs: 0, pausedMs: 0 };
    this.episode.workedMs += workedMs;
    const started = performance.now();
    for (let now = started; !o.signal.aborted && now < started + pauseMs && this.yielding(now); ) {
      await o.sleep(Math.min(100, started + pauseMs - now), o.signal);
      now = performance.now();
    }
    const paused = performance.now() - started;
    this.episode.pausedMs += paused;
    return paused;
  }
}

/**
 * Lowers every thread of this process to `nice` (Linux keeps a nice value per thread,
 * and Node's V8 and libuv threads exist before this runs; threads made later inherit
 * it). Returns how many threads it lowered.
 */
export function lowerOwnPriority(nice: number): number {
  let tids: number[];
  try {
    tids = readdirSync("/proc/self/task").map(Number);
  } catch {
    tids = [0]; // not Linux: the calling thread, which is what setpriority(0) means there
  }
  let lowered = 0;
  for (const tid of tids) {
    try {
      if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
      lowered++;
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return lowered;
}

/**
 * The backend `pid` is a process of this machine: the server answered on loopback
 * or a Unix socket (so it shares this network namespace, hence the machine), and
 * the process of that id here is a PostgreSQL one. Permission is the kernel's
 * to judge (the same user, or root: the embedded server runs as its own user under root).
 */
function isLocalBackend(pid: number, serverAddr: string | null): boolean {
  if (serverAddr !== null && !/^(127\.|::1$)/.test(serverAddr)) return false;
  try {
    return /^Name:\s*postgres$/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false; // not Linux, or not here
  }
}

/**
 * Lowers the priority of each new connection's PostgreSQL backend too, where it
 * runs on this machine and the kernel lets us (the embedded default): the worker's
 * SQL is most of its CPU. A backend elsewhere is left as it is, and said so once.
 */
export function lowerBackendPriority(pool: pg.Pool, nice: number, log: Log): void {
  let saidRemote = false;
  pool.on("connect", (client) => {
    client.query("SELECT pg_backend_pid() AS pid, host(inet_server_addr()) AS addr").then(
      ({ rows }) => {
        const pid = Number(rows[0].pid);
        if (isLocalBackend(pid, rows[0].addr)) {
          try {
            if (os.getPriority(pid) < nice) os.setPriority(pid, nice);
            return;
          } catch {
            // fall through: not ours after all
          }
        }
        if (!saidRemote) {
          saidRemote = true;
          log("worker.backend_priority_unchanged", {
            reason: "the database server is not on this machine, or not ours to lower",
          });
        }
      },
      () => undefined, // a connection that failed at once: the pool reports it to its user
    );
  });
}
