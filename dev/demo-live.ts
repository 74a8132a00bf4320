// `npm start`'s live demo: a provider simulator plays Stripe for the demo tenant
// (its settlement API on a fixed port), and, the first time, a generated day of
// deliveries (~200, 5% never delivered) goes to the running web app, one extra
// payment Stripe never settled is posted, and once the worker has drained, a
// reconciliation run for that day fetches what never arrived and opens a case
// for the payment Stripe has no record of. Later starts only bring the
// simulator back (same seed, same day), so nothing is doubled.
import { SYSTEM_ACTOR, type Actor } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import type { DemoCredentials } from "@/dev/demo";
import { runReconciliation } from "@/lib/recon/run";
import { DEMO_LABEL } from "@/lib/recon/runs";
import { windowEndingBy } from "@/lib/recon/schedule";
import { generateDay } from "@/dev/simulator/day";
import { startSimulator, type Simulator } from "@/dev/simulator/server";
import { signedHeaders } from "@/dev/simulator/sign";
import { updateEndpointSettings } from "@/lib/admin/tenants";

export const DEMO_ACTOR: Actor = { ...SYSTEM_ACTOR, label: DEMO_LABEL };
const SEED = 2026_12_02;
const API_KEY = "sk_test_tally_demo";
const PHANTOM_AMOUNT = 4200;

type Log = (line: string) => void;

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Starts the simulator and, unless done before, plays the demo day. Resolves once the simulator listens; the day plays on in the background. */
export async function startLiveDemo(o: {
  creds: DemoCredentials;
  webUrl: string;
  port: number;
  log: Log;
}): Promise<{ simulator: Simulator; played: Promise<void> } | null> {
  const tenant = await prisma.tenant.findUniqueOrThrow({ where: { slug: o.creds.tenant } });
  const endpoint = await prisma.providerEndpoint.findUniqueOrThrow({
    where: { tenantId_provider: { tenantId: tenant.id, provider: "stripe" } },
  });
  const settings = (endpoint.settings ?? {}) as Record<string, unknown>;
  // The demo day ends ten minutes after the first start, so its deliveries, made now, fall inside it.
  const dayStart =
    typeof settings.demoDayStart === "number" ? settings.demoDayStart : Math.floor(Date.now() / 1000) - 86_400 + 600;
  const day = generateDay({
    seed: SEED,
    events: 200,
    tenants: [o.creds.tenant],
    providers: ["stripe"],
    dayStart,
    dropRate: 0.05,
  });
  let simulator: Simulator;
  try {
    simulator = await startSimulator({ day, tenant: o.creds.tenant, apiKey: API_KEY, port: o.port });
  } catch (error) {
    o.log(
      `demo simulator not started on port ${o.port} (${(error as Error).message}); set TALLY_DEMO_SIM_PORT to a free port, or TALLY_DEMO_SIMULATOR=0`,
    );
    return null;
  }
  const done = await prisma.reconRun.findFirst({ where: { tenantId: tenant.id, actorLabel: DEMO_ACTOR.label } });
  if (done) {
    await pointEndpointAt(o.creds.tenant, simulator, dayStart, settings);
    return { simulator, played: Promise.resolve() };
  }
  // Until the day is played, the endpoint keeps no API key: the worker's daily
  // schedule must not reconcile the day before its webhooks were even sent.
  if (settings.demoDayStart !== dayStart) {
    const r = await updateEndpointSettings(
      o.creds.tenant,
      "stripe",
      { settings: { demoDayStart: dayStart } },
      DEMO_ACTOR,
    );
    if (!r.ok) throw new Error(r.message);
  }
  return { simulator, played: playDay(o, tenant.id, simulator, dayStart, settings) };
}

/** The stripe endpoint's settlement API: the simulator. */
async function pointEndpointAt(
  slug: string,
  simulator: Simulator,
  dayStart: number,
  settings: Record<string, unknown>,
): Promise<void> {
  if (settings.apiBaseUrl === simulator.url && settings.apiKey === API_KEY && settings.demoDayStart === dayStart)
    return;
  const r = await updateEndpointSettings(
    slug,
    "stripe",
    { settings: { apiKey: API_KEY, apiBaseUrl: simulator.url, demoDayStart: dayStart } },
    DEMO_ACTOR,
  );
  if (!r.ok) throw new Error(r.message);
}

async function playDay(
  o: { creds: DemoCredentials; webUrl: string; log: Log },
  tenantId: string,
  simulator: Simulator,
  dayStart: number,
  settings: Record<string, unknown>,
): Promise<void> {
  await waitFor(
    "the web app",
    async () => (await fetch(`${o.webUrl}/api/health`).catch(() => null))?.ok === true,
    300_000,
  );
  // Delivering twice (a start that died half-way) is harmless: that is the product.
  const report = await simulator.deliver(o.webUrl, o.creds.secrets);
  const reference = `pi_demo_not_at_stripe_${dayStart}`;
  const created = dayStart + 12 * 3600;
  const body = JSON.stringify({
    id: `evt_demo_${dayStart}`,
    object: "event",
    type: "payment_intent.succeeded",
    created,
    data: {
      object: {
        id: reference,
        object: "payment_intent",
        amount: PHANTOM_AMOUNT,
        amount_received: PHANTOM_AMOUNT,
        currency: "usd",
        customer: null,
        metadata: { account: "acct_demo_phantom" },
        created,
        status: "succeeded",
      },
    },
  });
  const phantom = await fetch(`${o.webUrl}/api/webhooks/${o.creds.tenant}/stripe`, {
    method: "POST",
    headers: signedHeaders(
      { provider: "stripe", body, signature: "valid", messageId: `msg_demo_${dayStart}` },
      o.creds.secrets,
    ),
    body,
  });
  o.log(
    `demo day delivered: ${report.deliveries} deliveries (${report.dropped.length} never sent), plus one payment Stripe never settled (${phantom.status})`,
  );
  await waitFor(
    "the worker to drain the demo day",
    async () => (await prisma.rawEvent.count({ where: { tenantId, status: { in: ["RECEIVED", "CLAIMED"] } } })) === 0,
    120_000,
  );
  await pointEndpointAt(o.creds.tenant, simulator, dayStart, settings);
  // The run takes today's scheduled slot, so the worker's daily run does not repeat it today.
  const today = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000);
  // The demo day runs until ten minutes after the first start; this run covers it up to now, when it starts.
  const window = windowEndingBy(
    { from: new Date(dayStart * 1000), to: new Date((dayStart + 86_400) * 1000) },
    new Date(),
  )!;
  let r = await runReconciliation({
    tenantId,
    provider: "stripe",
    window,
    source: { kind: "api" },
    actor: DEMO_ACTOR,
    scheduledFor: today,
  });
  if (!r.ok && r.reason === "already_ran")
    r = await runReconciliation({ tenantId, provider: "stripe", window, source: { kind: "api" }, actor: DEMO_ACTOR });
  if (!r.ok) throw new Error(r.message);
  o.log(
    `demo reconciliation run ${r.value.runId}: ${r.value.matched} matched, ${r.value.theirsNotOurs} theirs-not-ours (${r.value.fetched} fetched), ${r.value.oursNotTheirs} ours-not-theirs, ${r.value.casesOpened} case(s) opened`,
  );
}
