// Gaps within the hour, not the day: every TALLY_GAP_CHECK_INTERVAL_MS the worker
// asks each provider that can say so for the events it created but failed to
// deliver (Stripe: `GET /v1/events?delivery_success=false`), and stores each as a
// raw event (source RECONCILIATION). They then take the normal path: claimed,
// posted once (a late real delivery of the same payment is a duplicate), with a
// receipt. The daily reconciliation still runs; it just finds less.
//
// Windows of creation times follow each other without gaps: a check covers from
// where the last successful one ended to now (the first covers
// TALLY_GAP_CHECK_LOOKBACK_MS), and a failed check leaves the window to the next.
// One replica runs a check at a time per endpoint: the decision to start one is
// taken under a transaction-scoped advisory lock on (tenant, provider).
import { bodySha256 } from "@/lib/pipeline/retention";
import { config } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { openSettings } from "@/lib/platform/secrets-at-rest";
import { RAW_EVENTS_CHANNEL, wake } from "@/lib/pipeline/wake";
import { settlementSourceFor } from "@/lib/recon/report-formats";
import type { EndpointContext, Provider, Window } from "@/lib/providers/types";

export type GapCheckOutcome = {
  tenantId: string;
  provider: Provider;
  checkId: bigint;
  window: Window;
  found: number;
  stored: number;
  error?: string;
};

/**
 * Starts a check for the endpoint if one is due: none has started within the
 * interval. Returns the new check's id and window, or null when not due (or another
 * replica just started it).
 */
async function startIfDue(
  tenantId: string,
  provider: Provider,
  now: Date,
  interval: number,
  lookback: number,
): Promise<{ id: bigint; window: Window } | null> {
  return prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`gap-check:${tenantId}:${provider}`}, 0))`;
    const last = await tx.gapCheck.findFirst({
      where: { tenantId, provider },
      orderBy: { startedAt: "desc" },
      select: { startedAt: true },
    });
    if (last && now.getTime() - last.startedAt.getTime() < interval) return null;
    const lastGood = await tx.gapCheck.findFirst({
      where: { tenantId, provider, finishedAt: { not: null }, error: null },
      orderBy: { windowTo: "desc" },
      select: { windowTo: true },
    });
    const from = lastGood?.windowTo ?? new Date(now.getTime() - lookback);
    if (from.getTime() >= now.getTime()) return null;
    const check = await tx.gapCheck.create({
      data: { tenantId, provider, windowFrom: from, windowTo: now, startedAt: now },
      select: { id: true },
    });
    return { id: check.id, window: { from, to: now } };
  });
}

/** Asks the provider for the window's undelivered events and stores each as a raw event. */
export async function runGapCheck(
  endpoint: EndpointContext,
  checkId: bigint,
  window: Window,
): Promise<Omit<GapCheckOutcome, "tenantId" | "provider" | "checkId" | "window">> {
  const source = settlementSourceFor(endpoint.provider);
  let found = 0;
  let stored = 0;
  try {
    if (!source?.undelivered) throw new Error(`${endpoint.provider} has no list of undelivered events`);
    for await (const event of source.undelivered(endpoint, window)) {
      found++;
      // No look-up of what we already hold: windows do not overlap, and an event stored twice
      // (a check that failed half-way is asked again) is absorbed by the claim as a duplicate.
      await prisma.rawEvent.create({
        data: {
          tenantId: endpoint.tenantId,
          provider: endpoint.provider,
          source: "RECONCILIATION",
          rawBody: event.rawBody,
          bodySha256: bodySha256(event.rawBody),
          deliveryId: event.deliveryId ?? null,
          headers: {
            ...event.headers,
            "x-tally-fetched-from": event.fetchedFrom,
            "x-tally-gap-check": String(checkId),
          },
        },
      });
      stored++;
    }
    await prisma.gapCheck.update({ where: { id: checkId }, data: { finishedAt: new Date(), found, stored } });
    if (stored > 0) wake(RAW_EVENTS_CHANNEL);
    return { found, stored };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await prisma.gapCheck.update({
      where: { id: checkId },
      data: { finishedAt: new Date(), found, stored, error: message.slice(0, 1000) },
    });
    if (stored > 0) wake(RAW_EVENTS_CHANNEL);
    return { found, stored, error: message };
  }
}

/** Runs every due gap check (enabled endpoints whose provider lists undelivered events and that have an API key). */
export async function runDueGapChecks(now = new Date()): Promise<GapCheckOutcome[]> {
  const interval = config().TALLY_GAP_CHECK_INTERVAL_MS;
  if (interval === 0) return [];
  const endpoints = await prisma.providerEndpoint.findMany({
    where: { enabled: true },
    select: { tenantId: true, provider: true, settings: true },
  });
  const outcomes: GapCheckOutcome[] = [];
  for (const e of endpoints) {
    // Credentials are stored sealed (secrets at rest): opened here, in the worker's memory only.
    const settings = openSettings((e.settings ?? {}) as Record<string, unknown>);
    if (!settlementSourceFor(e.provider)?.undelivered || !settings.apiKey) continue;
    const started = await startIfDue(e.tenantId, e.provider, now, interval, config().TALLY_GAP_CHECK_LOOKBACK_MS);
    if (!started) continue;
    const r = await runGapCheck({ tenantId: e.tenantId, provider: e.provider, settings }, started.id, started.window);
    outcomes.push({ tenantId: e.tenantId, provider: e.provider, checkId: started.id, window: started.window, ...r });
  }
  return outcomes;
}

/** The last check per provider of a tenant, for the overview. */
export async function lastGapChecks(tenantId: string) {
  const rows = await prisma.gapCheck.findMany({
    where: { tenantId },
    orderBy: { startedAt: "desc" },
    distinct: ["provider"],
    select: {
      provider: true,
      startedAt: true,
      finishedAt: true,
      windowFrom: true,
      windowTo: true,
      found: true,
      stored: true,
      error: true,
    },
  });
  return rows;
}
