// The hourly gap check against the provider simulator's `GET /v1/events?delivery_success=false`:
// what Stripe never delivered is posted within the hour through the normal path,
// once however many replicas ask, and a failed check leaves its window to the next.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { updateEndpointSettings } from "@/lib/admin/tenants";
import { prisma } from "@/lib/platform/db";
import { runDueGapChecks } from "@/lib/recon/gap-check";
import { generateDay, type Day } from "@/dev/simulator/day";
import { startSimulator, type DeliveryReport, type Simulator } from "@/dev/simulator/server";
import { aTenant, type TestTenant } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { startRouteServer } from "@/dev/testing/route-server";

const HOUR = 3600_000;
let tenant: TestTenant;
let sim: Simulator;
let day: Day;
let route: Awaited<ReturnType<typeof startRouteServer>>;
let report: DeliveryReport;
const now = new Date();

async function postingsByReference(): Promise<Map<string, number>> {
  const rows = await prisma.posting.groupBy({
    by: ["providerReference"],
    where: { tenantId: tenant.id, kind: { in: ["PAYMENT", "REFUND"] } },
    _count: true,
  });
  return new Map(rows.map((r) => [r.providerReference ?? "", r._count]));
}

// Through the admin path, as people set it: the key is stored sealed, and the check must open it.
async function useApiKey(apiKey: string): Promise<void> {
  const r = await updateEndpointSettings(
    tenant.slug,
    "stripe",
    { settings: { apiKey, apiBaseUrl: sim.url } },
    SYSTEM_ACTOR,
  );
  if (!r.ok) throw new Error(r.message);
  const stored = await prisma.providerEndpoint.findUniqueOrThrow({
    where: { tenantId_provider: { tenantId: tenant.id, provider: "stripe" } },
  });
  expect(String((stored.settings as Record<string, unknown>).apiKey)).not.toContain(apiKey);
}

beforeAll(async () => {
  tenant = await aTenant();
  // A day that ended an hour ago, so every event was created before the check's "now".
  const dayStart = Math.floor((now.getTime() - 25 * HOUR) / 1000);
  day = generateDay({ seed: 77, events: 300, tenants: [tenant.slug], providers: ["stripe"], dayStart, dropRate: 0.08 });
  sim = await startSimulator({ day, tenant: tenant.slug });
  await useApiKey(sim.apiKey);
  route = await startRouteServer();
  report = await sim.deliver(route.url, { stripe: tenant.stripeSecret, standard: tenant.standardSecret });
  await drainAll();
});
afterAll(async () => {
  await sim.close();
  await route.close();
});

describe("the hourly gap check", () => {
  it("posts, once, every movement Stripe never delivered, however many replicas check at once", async () => {
    const expected = day.movements.filter((m) => m.tenant === tenant.slug && m.provider === "stripe");
    expect(report.dropped.length).toBeGreaterThan(5);
    const before = await postingsByReference();
    for (const reference of report.dropped) expect(before.has(reference), reference).toBe(false);

    const outcomes = (await Promise.all(Array.from({ length: 4 }, () => runDueGapChecks(now))))
      .flat()
      .filter((o) => o.tenantId === tenant.id);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ found: report.dropped.length, stored: report.dropped.length });
    expect(outcomes[0]!.error).toBeUndefined();
    const stored = await prisma.rawEvent.findMany({
      where: { tenantId: tenant.id, source: "RECONCILIATION" },
      select: { deliveryId: true },
    });
    expect(stored.map((e) => e.deliveryId).sort()).toEqual(report.dropped.map((r) => `evt_undelivered_${r}`).sort());

    await drainAll();
    const after = await postingsByReference();
    expect([...after.keys()].sort()).toEqual(expected.map((m) => m.reference).sort());
    expect([...after.values()].every((n) => n === 1)).toBe(true);

    // The real webhook arriving late after all is a duplicate, not a second credit.
    expect(await sim.redeliver(route.url, { stripe: tenant.stripeSecret }, report.dropped[0]!)).toBe(200);
    await drainAll();
    expect((await postingsByReference()).get(report.dropped[0]!)).toBe(1);
  });

  it("is not due again within the hour; the next window starts where the last ended", async () => {
    expect(
      (await runDueGapChecks(new Date(now.getTime() + 10 * 60_000))).filter((o) => o.tenantId === tenant.id),
    ).toEqual([]);
    const next = (await runDueGapChecks(new Date(now.getTime() + HOUR))).filter((o) => o.tenantId === tenant.id);
    expect(next).toHaveLength(1);
    expect(next[0]!.window.from.getTime()).toBe(now.getTime());
    expect(next[0]).toMatchObject({ found: 0, stored: 0 });
  });

  it("a check the provider refuses is recorded with its error, and the next one asks for the same window again", async () => {
    await useApiKey("sk_test_wrong");
    const failed = (await runDueGapChecks(new Date(now.getTime() + 2 * HOUR))).filter((o) => o.tenantId === tenant.id);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error).toMatch(/Stripe API \/v1\/events answered 401/);
    await useApiKey(sim.apiKey);
    const retried = (await runDueGapChecks(new Date(now.getTime() + 3 * HOUR))).filter((o) => o.tenantId === tenant.id);
    expect(retried).toHaveLength(1);
    expect(retried[0]!.window.from.getTime()).toBe(now.getTime() + HOUR);
    expect(retried[0]!.error).toBeUndefined();
  });
});
