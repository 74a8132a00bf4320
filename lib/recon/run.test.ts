import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { runReconciliation, type ReconSummary } from "@/lib/recon/run";
import { expectedBalances, generateDay, type Day } from "@/dev/simulator/day";
import { startSimulator, type DeliveryReport, type Simulator } from "@/dev/simulator/server";
import { aStripePayment, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { drainAll as drain } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";
import { startRouteServer } from "@/dev/testing/route-server";
import { balancesByCode } from "@/lib/ledger/accounts";

const HOUR = 3600_000;
let tenant: TestTenant;
let sim: Simulator;
let day: Day;
let route: Awaited<ReturnType<typeof startRouteServer>>;
let report: DeliveryReport;
let window: { from: Date; to: Date };
const dir = mkdtempSync(path.join(os.tmpdir(), "tally-recon-"));

async function recon(
  source: Parameters<typeof runReconciliation>[0]["source"] = { kind: "api" },
  w: typeof window | undefined = window,
): Promise<ReconSummary> {
  const r = await runReconciliation({
    tenantId: tenant.id,
    provider: "stripe",
    window: w,
    source,
    actor: SYSTEM_ACTOR,
  });
  if (!r.ok) throw new Error(r.message);
  return r.value;
}

/** The ledger as a comparable value: postings by reference, balances by account code. */
async function ledger() {
  const postings = await prisma.posting.findMany({
    where: { tenantId: tenant.id },
    select: {
      providerReference: true,
      kind: true,
      entries: { select: { amount: true, currency: true, account: { select: { code: true } } } },
    },
    orderBy: { providerReference: "asc" },
  });
  const balances = await balancesByCode(tenant.id);
  return { postings, balances: balances.map((b) => `${b.code}|${b.currency}|${b.amount}`).sort() };
}

beforeAll(async () => {
  tenant = await aTenant();
  // The day straddles now, so the webhooks delivered now fall inside its window.
  const dayStart = Math.floor((Date.now() - 12 * HOUR) / 1000);
  window = { from: new Date(dayStart * 1000), to: new Date((dayStart + 86_400) * 1000) };
  day = generateDay({
    seed: 4242,
    events: 400,
    tenants: [tenant.slug],
    providers: ["stripe"],
    dayStart,
    dropRate: 0.05,
    retryRate: 0.2,
  });
  sim = await startSimulator({ day, tenant: tenant.slug });
  await prisma.providerEndpoint.update({
    where: { tenantId_provider: { tenantId: tenant.id, provider: "stripe" } },
    data: { settings: { apiKey: sim.apiKey, apiBaseUrl: sim.url } },
  });
  route = await startRouteServer();
  report = await sim.deliver(route.url, { stripe: tenant.stripeSecret, standard: tenant.standardSecret });
  await drain();
});
afterAll(async () => {
  await sim?.close();
  await route?.close();
});

describe("daily reconciliation against the provider simulator", () => {
  let first: ReconSummary;

  it("a day with 5% dropped, ~20% duplicated, reordered deliveries: every dropped payment is fetched and posted once; buckets equal what the simulator did", async () => {
    const settled = sim.movements.length;
    expect(report.dropped.length).toBeGreaterThan(3);
    expect(report.duplicates).toBeGreaterThan(settled * 0.15);
    first = await recon();
    // The day's payouts (one per currency) were delivered as payout.paid and match their payout lines.
    expect(sim.payouts.length).toBeGreaterThan(0);
    expect(first).toMatchObject({
      compared: settled + sim.payouts.length,
      matched: settled + sim.payouts.length - report.dropped.length,
      theirsNotOurs: report.dropped.length,
      oursNotTheirs: 0,
      mismatched: 0,
      fetched: report.dropped.length,
      fetchFailed: 0,
      casesOpened: 0,
    });
    await drain();
    const after = await ledger();
    for (const m of sim.movements)
      expect(after.postings.filter((p) => p.providerReference === m.reference)).toHaveLength(1);
    const expected = [...expectedBalances(sim.movements)]
      .map(([k, v]) => `${k.replace(`${tenant.slug}|`, "")}|${v}`)
      .sort();
    expect(after.balances.filter((b) => b.startsWith("customer:"))).toEqual(expected);
    const fetched = await prisma.reconDiscrepancy.findMany({
      where: { tenantId: tenant.id, bucket: "THEIRS_NOT_OURS" },
      include: { case: true },
    });
    expect(fetched.map((d) => d.reference).sort()).toEqual([...report.dropped].sort());
    for (const d of fetched) {
      expect(d).toMatchObject({ state: "FETCHED", case: null });
      expect(await prisma.rawEvent.findUniqueOrThrow({ where: { id: d.rawEventId! } })).toMatchObject({
        source: "RECONCILIATION",
        status: "DONE",
      });
    }
    expect(await ledgerViolations()).toEqual([]);
  });

  it("re-running the window duplicates nothing and marks the fetched items resolved", async () => {
    const again = await recon();
    expect(again).toMatchObject({
      matched: sim.movements.length + sim.payouts.length,
      theirsNotOurs: 0,
      newDiscrepancies: 0,
      casesOpened: 0,
      resolvedOnRecheck: first.theirsNotOurs,
    });
    expect(await prisma.reconDiscrepancy.count({ where: { tenantId: tenant.id } })).toBe(first.theirsNotOurs);
    expect(await prisma.reconDiscrepancy.count({ where: { tenantId: tenant.id, state: "RESOLVED" } })).toBe(
      first.theirsNotOurs,
    );
  });

  it("a late real webhook for an item already fetched by reconciliation posts nothing", async () => {
    const before = await ledger();
    const late = report.dropped[0]!;
    expect(await sim.redeliver(route.url, { stripe: tenant.stripeSecret, standard: tenant.standardSecret }, late)).toBe(
      200,
    );
    await drain();
    expect(await ledger()).toEqual(before);
    const raws = await prisma.rawEvent.findMany({ where: { tenantId: tenant.id }, orderBy: { id: "desc" }, take: 1 });
    expect(raws[0]).toMatchObject({ status: "DUPLICATE", source: "WEBHOOK" });
  });

  it("an injected ours-not-theirs payment opens exactly one case and changes no ledger entry, also on a re-run", async () => {
    const phantom = aStripePayment({ reference: "pi_phantom_not_at_stripe", amount: 7777n, account: "acct_phantom" });
    expect((await deliver(stripeRequest(tenant, phantom))).status).toBe(200);
    await drain();
    const before = await ledger();
    const r1 = await recon();
    expect(r1).toMatchObject({ oursNotTheirs: 1, casesOpened: 1, theirsNotOurs: 0, mismatched: 0 });
    expect(await ledger()).toEqual(before);
    const r2 = await recon();
    expect(r2).toMatchObject({ oursNotTheirs: 1, casesOpened: 0, newDiscrepancies: 0 });
    const cases = await prisma.case.findMany({ where: { tenantId: tenant.id }, include: { discrepancy: true } });
    expect(cases).toHaveLength(1);
    expect(cases[0]).toMatchObject({
      kind: "OURS_NOT_THEIRS",
      status: "OPEN",
      discrepancy: { reference: "pi_phantom_not_at_stripe", ourAmount: 7777n, theirAmount: null },
    });
    expect(await ledger()).toEqual(before);
  });

  it("imports the same settlement as Stripe's itemized balance report CSV, with the same buckets", async () => {
    // The simulator's balance transactions (charges with their fees, refunds, the payouts) as the report file.
    const byCharge = new Map(sim.movements.filter((m) => m.chargeId).map((m) => [m.chargeId!, m]));
    const rows = [
      "balance_transaction_id,created_utc,available_on_utc,currency,gross,fee,net,reporting_category,source_id,description,payment_intent_id,charge_id,refund_id",
      ...sim.balanceTransactions.map((t) => {
        const currency = t.currency.toUpperCase();
        const major = (n: number) => {
          const sign = n < 0 ? "-" : "";
          const a = Math.abs(n);
          return (
            sign + (currency === "JPY" ? String(a) : currency === "KWD" ? (a / 1000).toFixed(3) : (a / 100).toFixed(2))
          );
        };
        const at = new Date(t.created * 1000).toISOString().replace("T", " ").slice(0, 19);
        const payment = byCharge.get(t.source);
        return [
          t.id,
          at,
          at,
          t.currency,
          major(t.amount),
          major(t.fee),
          major(t.net),
          t.reporting_category,
          t.source,
          `"Line, ""${t.source}"""`,
          payment?.reference ?? "",
          payment ? t.source : "",
          t.reporting_category === "refund" ? t.source : "",
        ].join(",");
      }),
    ];
    const file = path.join(dir, "itemized.csv");
    writeFileSync(file, `${rows.join("\r\n")}\r\n`);
    const r = await recon({ kind: "csv", file });
    // Payments, refunds and payouts match (their fees too, counted apart); the phantom is ours-not-theirs.
    expect(r).toMatchObject({
      compared: sim.movements.length + sim.payouts.length + 1,
      matched: sim.movements.length + sim.payouts.length,
      oursNotTheirs: 1,
      theirsNotOurs: 0,
      mismatched: 0,
      feesPosted: 0,
    });
    const run = await prisma.reconRun.findUniqueOrThrow({ where: { id: r.runId } });
    expect(run).toMatchObject({ source: "CSV", sourceName: "itemized.csv", status: "DONE" });
  });

  describe("refuses a malformed report whole, naming row and column, importing nothing", () => {
    const header =
      "balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,payment_intent_id";
    const good = "txn_1,2026-12-01 10:00:00,usd,10.00,0.59,9.41,charge,ch_1,pi_1";
    const cases: [string, string[], string][] = [
      [
        "missing column",
        [
          "balance_transaction_id,created_utc,currency,fee,net,reporting_category,source_id,payment_intent_id",
          "txn_1,2026-12-01 10:00:00,usd,0.59,9.41,charge,ch_1,pi_1",
        ],
        'row 1, column "gross": missing column "gross"',
      ],
      [
        "bad amount",
        [header, good, "txn_2,2026-12-01 11:00:00,usd,12.5x,0,0,charge,ch_2,pi_2"],
        'row 3, column "gross": amount must be a decimal number like "10.50", got "12.5x"',
      ],
      [
        "too many decimals",
        [header, good, "txn_2,2026-12-01 11:00:00,usd,12.505,0,0,charge,ch_2,pi_2"],
        'row 3, column "gross": 12.505 USD has more than 2 decimal places',
      ],
      [
        "bad date",
        [header, good, good, "txn_3,01/12/2026,usd,1.00,0,1.00,charge,ch_3,pi_3"],
        'row 4, column "created_utc": not a date and time: "01/12/2026"',
      ],
      ["short row", [header, good, "txn_2,2026-12-01 11:00:00,usd"], "row 3: has 3 fields, the header has 9"],
      [
        "unclosed quote",
        [header, good, 'txn_2,"2026-12-01 11:00:00,usd,1.00,0,1.00,charge,ch_2,pi_2'],
        "a quoted field is never closed",
      ],
    ];
    for (const [name, lines, message] of cases) {
      it(name, async () => {
        const file = path.join(dir, `${name.replace(/\W/g, "-")}.csv`);
        writeFileSync(file, `${lines.join("\n")}\n`);
        const discrepancies = await prisma.reconDiscrepancy.count();
        const days = await prisma.reconDayStat.count();
        const r = await runReconciliation({
          tenantId: tenant.id,
          provider: "stripe",
          source: { kind: "csv", file },
          actor: SYSTEM_ACTOR,
        });
        expect(r).toMatchObject({ ok: false, reason: "malformed_report" });
        expect(!r.ok && r.message).toContain(message);
        expect(await prisma.reconDiscrepancy.count()).toBe(discrepancies);
        expect(await prisma.reconDayStat.count()).toBe(days);
        const run = await prisma.reconRun.findFirstOrThrow({ where: { tenantId: tenant.id }, orderBy: { id: "desc" } });
        expect(run).toMatchObject({ status: "FAILED", error: expect.stringContaining(message), matched: 0 });
      });
    }
  });
});

describe("the webhook-silence check", () => {
  it("raises an alert when the provider settled money but its webhooks stopped, and clears it when they flow again", async () => {
    const quiet = await aTenant();
    const dayStart = Math.floor((Date.now() - 12 * HOUR) / 1000);
    const w = { from: new Date(dayStart * 1000), to: new Date((dayStart + 86_400) * 1000) };
    const silentDay = generateDay({ seed: 7, events: 40, tenants: [quiet.slug], providers: ["stripe"], dayStart });
    const quietSim = await startSimulator({ day: silentDay, tenant: quiet.slug });
    await prisma.providerEndpoint.update({
      where: { tenantId_provider: { tenantId: quiet.id, provider: "stripe" } },
      data: { settings: { apiKey: quietSim.apiKey, apiBaseUrl: quietSim.url } },
    });
    try {
      // Nothing delivered at all: an endpoint misconfigured at the provider.
      const r = await runReconciliation({
        tenantId: quiet.id,
        provider: "stripe",
        window: w,
        source: { kind: "api" },
        actor: SYSTEM_ACTOR,
      });
      expect(r.ok && r.value.silence).toMatchObject({ webhooksReceived: 0, alert: true });
      const alert = await prisma.alert.findFirstOrThrow({
        where: { tenantId: quiet.id, kind: "webhook_silence", clearedAt: null },
      });
      expect(alert.message).toMatch(/stripe settled \d+ payments and refunds .* but Tally received 0 webhooks/);
      // The fetched events are not webhooks: the silence remains until deliveries resume.
      const route2 = await startRouteServer();
      await quietSim.deliver(route2.url, { stripe: quiet.stripeSecret, standard: quiet.standardSecret });
      await route2.close();
      const again = await runReconciliation({
        tenantId: quiet.id,
        provider: "stripe",
        window: w,
        source: { kind: "api" },
        actor: SYSTEM_ACTOR,
      });
      expect(again.ok && again.value.silence.alert).toBe(false);
      expect(await prisma.alert.count({ where: { tenantId: quiet.id, clearedAt: null } })).toBe(0);
    } finally {
      await quietSim.close();
    }
  });
});
