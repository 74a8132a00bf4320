// The daily reconciliation, run by the worker. Each (tenant, provider, day) runs
// once however many replicas there are: the run row for the day is unique.
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { config } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { runReconciliation, type ReconSummary } from "@/lib/recon/run";
import { settlementSourceFor } from "@/lib/recon/report-formats";
import { SCHEDULER_LABEL } from "@/lib/recon/runs";
import type { Window } from "@/lib/providers/types";

const DAY = 86_400_000;

export function startOfUtcDay(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}

/** The default window: the last `lookbackDays` whole days, at least a full settlement cycle. */
export function lookbackWindow(now: Date, lookbackDays: number): Window {
  const to = startOfUtcDay(now);
  return { from: new Date(to.getTime() - lookbackDays * DAY), to };
}

/**
 * A window never ends after its run started: nothing can have settled later, and a
 * window reaching into the future claims a coverage the run cannot have (a run of
 * "today" would read as if the rest of the day were checked). Null when the window
 * starts at or after `start`: there is nothing to compare yet.
 */
export function windowEndingBy(window: Window, start: Date): Window | null {
  if (window.from.getTime() >= start.getTime()) return null;
  return window.to.getTime() > start.getTime() ? { from: window.from, to: start } : window;
}

export function lookbackDaysFor(settings: Record<string, unknown>): number {
  const own = Number(settings.reconLookbackDays);
  return Number.isInteger(own) && own > 0 ? own : config().TALLY_RECON_LOOKBACK_DAYS;
}

export type ScheduledOutcome = {
  tenantId: string;
  provider: string;
  result: "ran" | "already_ran" | "failed";
  summary?: ReconSummary;
  message?: string;
};

/** When the daily run of this UTC day is due; null when the schedule is "off". */
export function scheduledTimeOn(day: Date): Date | null {
  const schedule = config().TALLY_RECON_SCHEDULE;
  if (schedule === "off") return null;
  const [hh, mm] = schedule.split(":").map(Number) as [number, number];
  return new Date(startOfUtcDay(day).getTime() + (hh * 60 + mm) * 60_000);
}

/** The endpoints the daily schedule reconciles (one tenant's when given): enabled, with a settlement API and its key. */
export async function scheduledEndpoints(tenantId?: string) {
  const endpoints = await prisma.providerEndpoint.findMany({
    where: { enabled: true, ...(tenantId && { tenantId }) },
    select: { tenantId: true, provider: true, settings: true },
  });
  return endpoints
    .map((e) => ({ ...e, settings: (e.settings ?? {}) as Record<string, unknown> }))
    .filter((e) => settlementSourceFor(e.provider) && e.settings.apiKey);
}

/** Runs every due daily reconciliation; a no-op before the scheduled time or when it is "off". */
export async function runDueReconciliations(now = new Date()): Promise<ScheduledOutcome[]> {
  const today = startOfUtcDay(now);
  const due = scheduledTimeOn(today);
  if (due === null || now.getTime() < due.getTime()) return [];
  const outcomes: ScheduledOutcome[] = [];
  for (const e of await scheduledEndpoints()) {
    const settings = e.settings;
    const done = await prisma.reconRun.findUnique({
      where: { tenantId_provider_scheduledFor: { tenantId: e.tenantId, provider: e.provider, scheduledFor: today } },
    });
    if (done) continue;
    const r = await runReconciliation({
      tenantId: e.tenantId,
      provider: e.provider,
      window: lookbackWindow(now, lookbackDaysFor(settings)),
      source: { kind: "api" },
      actor: { ...SYSTEM_ACTOR, label: SCHEDULER_LABEL },
      scheduledFor: today,
    });
    outcomes.push(
      r.ok
        ? { tenantId: e.tenantId, provider: e.provider, result: "ran", summary: r.value }
        : {
            tenantId: e.tenantId,
            provider: e.provider,
            result: r.reason === "already_ran" ? "already_ran" : "failed",
            message: r.message,
          },
    );
  }
  return outcomes;
}
