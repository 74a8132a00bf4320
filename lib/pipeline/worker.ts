// The worker: loops in one process. Claim-and-commit (woken by NOTIFY, polling
// as the safety net), the outbox dispatcher, the sweep timer, the schedule, and
// the alert rules with their notifications' dispatcher.
// Safe as several replicas: every take is SKIP LOCKED or advisory-locked.
import pg from "pg";
import { ACK_PRESSURE_CHANNEL, AckYield } from "@/lib/pipeline/ack-pressure";
import { pickUpReceived, type PickUpResult, takeReleasedClaims, type OwnedClaim } from "@/lib/pipeline/claim";
import { releaseClaim, retryDelayMs } from "@/lib/pipeline/claim-state";
import { type BatchOutcome, commitBatch, commitInPickUp, postableInPickUp } from "@/lib/pipeline/commit";
import { config } from "@/lib/platform/config";
import { pauseIfFaultAt } from "@/lib/pipeline/fault";
import { databaseUrl, isDatabaseUnavailable } from "@/lib/platform/db";
import { dispatchOutbox } from "@/lib/pipeline/outbox";
import { configuredTransport, type ReceiptTransport } from "@/lib/pipeline/receipt-transport";
import { dispatchAlertNotifications } from "@/lib/alerts/deliver";
import { evaluateAlerts } from "@/lib/alerts/evaluate";
import { runDueBankRematches } from "@/lib/bank/rematch";
import { runDueGapChecks } from "@/lib/recon/gap-check";
import { runDueReconciliations } from "@/lib/recon/schedule";
import { holdClaims } from "@/lib/pipeline/holder";
import { maintainRawEvents } from "@/lib/pipeline/retention";
import { sweepStaleClaims } from "@/lib/pipeline/sweep";
import { CLAIMS_CHANNEL, OUTBOX_CHANNEL, RAW_EVENTS_CHANNEL, wake } from "@/lib/pipeline/wake";
import { workerMetrics } from "@/lib/pipeline/worker-metrics";
import { jsonLog, type Log } from "@/lib/platform/log";
import { endSpan, spanIn, traceIdsOf, traceparentOf, tracingOn } from "@/lib/platform/tracing";

export { jsonLog, type Log } from "@/lib/platform/log";

/** LISTEN on a dedicated connection; reconnects on its own. Losing it costs latency only: every loop also polls. */
class Wakeups {
  private client: pg.Client | null = null;
  private waiters = new Map<string, Set<() => void>>();
  private listeners = new Map<string, () => void>();
  private closed = false;

  constructor(
    private readonly channels: string[],
    private readonly log: Log,
  ) {}

  async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: databaseUrl() });
    const retry = () => {
      if (this.client === client) this.client = null;
      client.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => void this.connect(), 2000).unref();
    };
    client.on("error", retry);
    client.on("notification", (n) => this.fire(n.channel));
    try {
      await client.connect();
      for (const channel of this.channels) await client.query(`LISTEN ${channel}`);
      this.client = client;
    } catch (error) {
      this.log("listen.unavailable", { error: String(error) });
      retry();
    }
  }

  /** Called on every notification on `channel` (one of those listened to), for as long as the worker runs. */
  on(channel: string, listener: () => void): void {
    this.listeners.set(channel, listener);
  }

  private fire(channel: string): void {
    this.listeners.get(channel)?.();
    const set = this.waiters.get(channel);
    if (!set) return;
    this.waiters.delete(channel);
    for (const resolve of set) resolve();
  }

  /** Resolves on a notification on any of the channels, after timeoutMs, or on abort. */
  wait(channels: string[], timeoutMs: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        for (const c of channels) this.waiters.get(c)?.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener("abort", done, { once: true });
      for (const c of channels) {
        if (!this.waiters.has(c)) this.waiters.set(c, new Set());
        this.waiters.get(c)!.add(done);
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client?.end().catch(() => undefined);
  }
}

/** Counts and logs a batch's outcomes; a member that failed is given back with a back-off. */
async function recordOutcomes(claims: OwnedClaim[], outcomes: BatchOutcome[], log: Log): Promise<void> {
  const m = workerMetrics();
  for (const [i, outcome] of outcomes.entries()) {
    const claim = claims[i]!;
    if (outcome.kind === "posted") {
      m.processed.inc({ provider: claim.provider });
      if (claim.receivedAt) m.endToEnd.observe((Date.now() - claim.receivedAt.getTime()) / 1000);
    } else if (outcome.kind === "fenced") {
      m.fenced.inc();
      log("commit.fenced", {
        claim: claim.claimId,
        version: claim.version,
        reference: claim.reference,
        ...traceIdsOf(claim.traceParent),
      });
    } else if (outcome.kind === "held") {
      log("claim.held", {
        claim: claim.claimId,
        reference: claim.reference,
        reason: outcome.reason,
        ...traceIdsOf(claim.traceParent),
      });
    } else if (outcome.kind === "deferred") {
      m.deferred.inc();
      if (outcome.failed) m.failures.inc({ stage: "commit" });
      log(outcome.failed ? "claim.failed" : "claim.deferred", {
        claim: claim.claimId,
        reference: claim.reference,
        reason: outcome.reason,
        ...traceIdsOf(claim.traceParent),
      });
    } else {
      // A bug or a refused write: give the claim back with a back-off instead of
      // holding it until the sweep; past the attempt limit it becomes FAILED.
      const { error } = outcome;
      log("commit.error", {
        claim: claim.claimId,
        reference: claim.reference,
        error: String(error),
        ...traceIdsOf(claim.traceParent),
      });
      const released = await releaseClaim(
        claim,
        `commit failed: ${error instanceof Error ? error.message : String(error)}`,
        retryDelayMs(5),
      );
      if (released?.failed) m.failures.inc({ stage: "commit" });
    }
  }
}

/** A pick-up's claims committed together (one transaction, see commitBatch). */
async function commitAll(claims: OwnedClaim[], log: Log): Promise<void> {
  if (claims.length === 0) return;
  const outcomes = await commitBatch(claims, config().TALLY_WORKER_COMMIT_CONCURRENCY);
  await recordOutcomes(claims, outcomes, log);
}

/**
 * With tracing on: one event.pickup span per event taken, in the trace its
 * acknowledgement began, saying what became of it; its claims' commits continue from
 * it. Claims posted inside the pick-up (commitInPickUp) need their event's span before
 * the pick-up ends: `open` starts it then, `end` finishes every event's.
 */
function pickUpTracer(startTime: number) {
  const open = new Map<bigint, NonNullable<ReturnType<typeof spanIn>>>();
  const start = (rawEventId: bigint, provider: string, traceParent: string | null) => {
    const span = spanIn(traceParent, "event.pickup", {
      startTime,
      attributes: { "tally.raw_event.id": rawEventId.toString(), "tally.provider": provider },
    });
    if (span) open.set(rawEventId, span);
    return span;
  };
  return {
    /** Before claims are posted in the pick-up: each continues from its event's span. */
    open(claims: OwnedClaim[]): void {
      if (!tracingOn()) return;
      for (const claim of claims) {
        const span = open.get(claim.rawEventId) ?? start(claim.rawEventId, claim.provider, claim.traceParent ?? null);
        if (span) claim.traceParent = traceparentOf(span);
      }
    },
    end(picked: PickUpResult): void {
      if (!tracingOn()) return;
      for (const e of picked.events) {
        const span = open.get(e.rawEventId) ?? start(e.rawEventId, e.provider, e.traceParent);
        if (!span) continue;
        span.setAttributes({ "tally.outcome": e.status, "tally.batch.size": picked.picked });
        const context = traceparentOf(span);
        for (const claim of picked.claims) if (claim.rawEventId === e.rawEventId) claim.traceParent = context;
        endSpan(span, e.status === "FAILED" ? "the body did not parse" : undefined);
      }
    },
  };
}

/** Released claims taken per pass (see processOnce); the batch size it had before batches grew to 250. */
const RETAKE_BATCH = 25;

/** One pass: released claims first (they are older), then newly received events. Returns how much it did. */
export async function processOnce(log: Log = jsonLog): Promise<number> {
  const m = workerMetrics();
  let work = 0;
  // Claims given back or taken over from a dead worker come RETAKE_BATCH at a time, not a
  // whole pick-up's worth: each take counts an attempt, so a worker killed while holding
  // 500 (2 loops of 250) must not spend one of everyone's attempts per kill again and again.
  // The replay proof (a SIGKILL every 2-4 s) once ended so with 166 claims FAILED out of attempts.
  const released = await takeReleasedClaims(RETAKE_BATCH);
  work += released.length;
  const takenOver = released.filter((c) => c.takenOver);
  if (takenOver.length > 0) {
    m.reclaimed.inc(takenOver.length);
    log("claims.taken_over", { claims: takenOver.map((c) => c.claimId), reason: "holder gone" });
  }
  await commitAll(released, log);
  const tracer = pickUpTracer(Date.now());
  const picked = await pickUpReceived(config().TALLY_WORKER_BATCH, {
    postable: postableInPickUp,
    commit: (tx, claims) => {
      tracer.open(claims.filter((c) => c.claimedDone));
      return commitInPickUp(tx, claims);
    },
  });
  tracer.end(picked);
  work += picked.picked;
  if (picked.posted.length > 0) {
    wake(OUTBOX_CHANNEL);
    if (picked.posted.some((p) => p.woken > 0)) wake(CLAIMS_CHANNEL);
    for (const { claim } of picked.posted) {
      m.processed.inc({ provider: claim.provider });
      if (claim.receivedAt) m.endToEnd.observe((Date.now() - claim.receivedAt.getTime()) / 1000);
    }
  }
  if (picked.claims.length > 0) await pauseIfFaultAt("after-claim");
  if (picked.duplicates) m.duplicates.inc(picked.duplicates);
  if (picked.conflicts) log("pickup.conflicts", { conflicts: picked.conflicts });
  if (picked.ignored) m.ignored.inc(picked.ignored);
  if (picked.failed) m.failures.inc({ stage: "parse" }, picked.failed);
  await commitAll(picked.claims, log);
  return work;
}

async function loop(
  name: string,
  signal: AbortSignal,
  log: Log,
  body: () => Promise<"busy" | "idle">,
  idle: () => Promise<void>,
): Promise<void> {
  let failures = 0;
  while (!signal.aborted) {
    try {
      const state = await body();
      failures = 0;
      if (state === "idle") await idle();
    } catch (error) {
      failures++;
      const delay = Math.min(30_000, 250 * 2 ** Math.min(failures, 7));
      log(`${name}.error`, {
        error: error instanceof Error ? error.message : String(error),
        retryInMs: delay,
        databaseUnavailable: isDatabaseUnavailable(error),
      });
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export type WorkerOptions = {
  signal: AbortSignal;
  log?: Log;
  transport?: ReceiptTransport;
  /** Run the outbox dispatcher loop in this process (default true). */
  dispatcher?: boolean;
  /** Run the sweep timer in this process (default true; the advisory lock keeps it to one at a time). */
  sweeper?: boolean;
  /** Run the daily reconciliation when due (default true; one run per tenant, provider and day across replicas). */
  scheduler?: boolean;
  /** Evaluate the alert rules every TALLY_ALERT_INTERVAL_MS and deliver their notifications (default true; safe across replicas). */
  alerts?: boolean;
  /** Make raw_events partitions ahead and apply each tenant's body retention every TALLY_MAINTENANCE_INTERVAL_MS (default true; safe across replicas). */
  maintenance?: boolean;
};

const SCHEDULER_TICK_MS = 60_000;

export async function runWorker(options: WorkerOptions): Promise<void> {
  const c = config();
  const log = options.log ?? jsonLog;
  const { signal } = options;
  const ackYield = c.TALLY_WORKER_ACK_YIELD ? new AckYield() : null;
  const wakeups = new Wakeups(
    [RAW_EVENTS_CHANNEL, CLAIMS_CHANNEL, OUTBOX_CHANNEL, ...(ackYield ? [ACK_PRESSURE_CHANNEL] : [])],
    log,
  );
  if (ackYield) wakeups.on(ACK_PRESSURE_CHANNEL, () => ackYield.notice(performance.now()));
  await wakeups.connect();
  const holder = await holdClaims(log);
  const transport = options.transport ?? (await configuredTransport());
  const m = workerMetrics();
  log("worker.start", {
    poll: c.TALLY_WORKER_POLL_MS,
    batch: c.TALLY_WORKER_BATCH,
    nice: c.TALLY_WORKER_NICE,
    ackYield: Boolean(ackYield),
    sweepEvery: c.TALLY_SWEEP_INTERVAL_MS,
    staleAfter: c.TALLY_STALE_CLAIM_MS,
    maxAttempts: c.TALLY_MAX_ATTEMPTS,
    receipts: transport.name,
  });

  let ready = false;
  const processLoop = (_: unknown, index: number) =>
    loop(
      "process",
      signal,
      log,
      async () => {
        // While yielding, one loop works and the others wait: the duty cycle below is one
        // loop's, and a second loop working through its pauses would halve what it gives.
        if (index > 0 && ackYield?.yielding(performance.now())) {
          await sleepUnlessAborted(100, signal);
          return "busy";
        }
        const started = performance.now();
        const work = await processOnce(log);
        // The web process's acknowledgements are over budget: pause as the duty cycle says (ack-pressure.ts).
        if (ackYield) {
          const paused = await ackYield.afterPickUp(work, performance.now() - started, {
            signal,
            sleep: sleepUnlessAborted,
            log,
          });
          if (paused > 0) m.ackYieldSeconds.inc(paused / 1000);
        }
        // Once per process: connected, its first look at the queue done. The replay's
        // supervisor kills only workers past this point, so a kill interrupts work.
        if (!ready) {
          ready = true;
          log("worker.ready", { work });
        }
        return work > 0 ? "busy" : "idle";
      },
      () => wakeups.wait([RAW_EVENTS_CHANNEL, CLAIMS_CHANNEL], c.TALLY_WORKER_POLL_MS, signal),
    );
  const loops = Array.from({ length: c.TALLY_WORKER_LOOPS }, processLoop);
  if (options.dispatcher ?? true) {
    loops.push(
      loop(
        "outbox",
        signal,
        log,
        async () => {
          const r = await dispatchOutbox(transport);
          if (r.sent) m.receiptsSent.inc(r.sent);
          if (r.failed) m.receiptFailures.inc(r.failed);
          if (r.dead) {
            m.receiptsDead.inc(r.dead);
            log("outbox.dead", { dead: r.dead });
          }
          return r.leased > 0 ? "busy" : "idle";
        },
        () => wakeups.wait([OUTBOX_CHANNEL], c.TALLY_OUTBOX_POLL_MS, signal),
      ),
    );
  }
  if (options.sweeper ?? true) {
    loops.push(
      loop(
        "sweep",
        signal,
        log,
        async () => {
          const r = await sweepStaleClaims();
          if (r) {
            m.sweeps.inc();
            log("sweep.pass", { released: r.released.length });
            m.reclaimed.inc(r.released.length);
            for (const s of r.released)
              log(s.failed ? "sweep.gave_up" : "sweep.released", {
                claim: s.id,
                key: s.key,
                attempts: s.attempts,
                heldForMs: s.heldForMs,
              });
          }
          return "idle";
        },
        () => sleepUnlessAborted(c.TALLY_SWEEP_INTERVAL_MS, signal),
      ),
    );
  }
  if (options.scheduler ?? true) {
    loops.push(
      loop(
        "recon",
        signal,
        log,
        async () => {
          for (const o of await runDueReconciliations()) {
            log(`recon.${o.result}`, {
              tenant: o.tenantId,
              provider: o.provider,
              message: o.message,
              matched: o.summary?.matched,
              theirsNotOurs: o.summary?.theirsNotOurs,
              oursNotTheirs: o.summary?.oursNotTheirs,
              mismatched: o.summary?.mismatched,
            });
          }
          for (const g of await runDueGapChecks()) {
            log(g.error ? "gap_check.failed" : "gap_check.done", {
              tenant: g.tenantId,
              provider: g.provider,
              check: String(g.checkId),
              from: g.window.from.toISOString(),
              to: g.window.to.toISOString(),
              found: g.found,
              stored: g.stored,
              message: g.error,
            });
          }
          for (const b of await runDueBankRematches()) {
            if (!b.summary && !b.error) continue;
            log(b.error ? "bank.rematch_failed" : "bank.rematch", {
              tenant: b.tenantId,
              message: b.error,
              matchedPayouts: b.summary?.matchedPayouts,
              unmatchedPayouts: b.summary?.unmatchedPayouts,
              casesOpened: b.summary?.casesOpened,
              casesClosed: b.summary?.casesClosed,
            });
          }
          return "idle";
        },
        () => sleepUnlessAborted(SCHEDULER_TICK_MS, signal),
      ),
    );
  }
  if (options.alerts ?? true) {
    loops.push(
      loop(
        "alerts",
        signal,
        log,
        async () => {
          for (const t of await evaluateAlerts())
            for (const [event, list] of [
              ["alert.opened", t.opened],
              ["alert.resolved", t.resolved],
            ] as const)
              for (const a of list) log(event, { tenant: t.tenant, rule: a.rule, subject: a.subject });
          return "idle";
        },
        () => sleepUnlessAborted(c.TALLY_ALERT_INTERVAL_MS, signal),
      ),
      // Its own loop, not the receipts': a mail server that hangs must not hold receipts back.
      loop(
        "alert_notifications",
        signal,
        log,
        async () => {
          const r = await dispatchAlertNotifications();
          if (r.failed) log("alert_notification.failed", { failed: r.failed, dead: r.dead });
          return r.leased > 0 ? "busy" : "idle";
        },
        () => wakeups.wait([OUTBOX_CHANNEL], c.TALLY_OUTBOX_POLL_MS, signal),
      ),
    );
  }
  if ((options.maintenance ?? true) && c.TALLY_MAINTENANCE_INTERVAL_MS > 0) {
    loops.push(
      loop(
        "maintenance",
        signal,
        log,
        async () => {
          const r = await maintainRawEvents({ monthsAhead: c.TALLY_RAW_EVENT_MONTHS_AHEAD });
          m.partitionedUntil.set(r.partitionedUntil.getTime() / 1000);
          const purged = r.purges.reduce((n, p) => n + p.purged, 0);
          m.bodiesPurged.inc(purged);
          if (r.partitionsMade.length > 0 || purged > 0)
            log("maintenance.done", {
              partitionsMade: r.partitionsMade,
              partitionedUntil: r.partitionedUntil.toISOString(),
              bodiesPurged: purged,
            });
          // A pass cut short by its time budget goes on at once, not in an hour.
          return r.purges.some((p) => !p.complete) ? "busy" : "idle";
        },
        () => sleepUnlessAborted(c.TALLY_MAINTENANCE_INTERVAL_MS, signal),
      ),
    );
  }
  await Promise.all(loops);
  await holder.close();
  await wakeups.close();
  log("worker.stop");
}
