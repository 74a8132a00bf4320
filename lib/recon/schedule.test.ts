import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { runDueReconciliations } from "@/lib/recon/schedule";
import { generateDay } from "@/dev/simulator/day";
import { startSimulator, type Simulator } from "@/dev/simulator/server";
import { aTenant, type TestTenant } from "@/dev/testing/builders";

let tenant: TestTenant;
let sim: Simulator;
beforeAll(async () => {
  tenant = await aTenant();
  const dayStart = Math.floor(Date.now() / 1000) - 2 * 86_400;
  sim = await startSimulator({ day: generateDay({ seed: 3, events: 30, tenants: [tenant.slug], providers: ["stripe"], dayStart }), tenant: tenant.slug });
  await prisma.providerEndpoint.update({ where: { tenantId_provider: { tenantId: tenant.id, provider: "stripe" } }, data: { settings: { apiKey: sim.apiKey, apiBaseUrl: sim.url } } });
});
afterAll(() => sim.close());

describe("the daily schedule", () => {
  it("runs each tenant's reconciliation once a day, however many replicas ask at once", async () => {
    const at = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate(), 3, 0)); // after 02:00 UTC
    const before = new Date(at.getTime() - 2 * 3600_000); // 01:00, not yet due
    expect(await runDueReconciliations(before)).toEqual([]);
    const outcomes = (await Promise.all(Array.from({ length: 4 }, () => runDueReconciliations(at)))).flat().filter((o) => o.tenantId === tenant.id);
    expect(outcomes.filter((o) => o.result === "ran")).toHaveLength(1);
    const runs = await prisma.reconRun.findMany({ where: { tenantId: tenant.id } });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ actorLabel: "scheduler", status: "DONE", source: "API" });
    expect(runs[0]!.windowTo.getTime() - runs[0]!.windowFrom.getTime()).toBe(3 * 86_400_000);
    expect(await runDueReconciliations(new Date(at.getTime() + 3600_000))).toEqual([]);
  });
});
