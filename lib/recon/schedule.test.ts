import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { runStarter } from "@/lib/recon/runs";
import { runDueReconciliations, windowEndingBy } from "@/lib/recon/schedule";
import { startReconciliation } from "@/lib/recon/start";
import { generateDay } from "@/dev/simulator/day";
import { startSimulator, type Simulator } from "@/dev/simulator/server";
import { aTenant, type TestTenant } from "@/dev/testing/builders";

let tenant: TestTenant;
let sim: Simulator;
beforeAll(async () => {
  tenant = await aTenant();
  const dayStart = Math.floor(Date.now() / 1000) - 2 * 86_400;
  sim = await startSimulator({
    day: generateDay({ seed: 3, events: 30, tenants: [tenant.slug], providers: ["stripe"], dayStart }),
    tenant: tenant.slug,
  });
  await prisma.providerEndpoint.update({
    where: { tenantId_provider: { tenantId: tenant.id, provider: "stripe" } },
    data: { settings: { apiKey: sim.apiKey, apiBaseUrl: sim.url } },
  });
});
afterAll(() => sim.close());

describe("the daily schedule", () => {
  it("runs each tenant's reconciliation once a day, however many replicas ask at once", async () => {
    const at = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate(), 3, 0)); // after 02:00 UTC
    const before = new Date(at.getTime() - 2 * 3600_000); // 01:00, not yet due
    expect(await runDueReconciliations(before)).toEqual([]);
    const outcomes = (await Promise.all(Array.from({ length: 4 }, () => runDueReconciliations(at))))
      .flat()
      .filter((o) => o.tenantId === tenant.id);
    expect(outcomes.filter((o) => o.result === "ran")).toHaveLength(1);
    const runs = await prisma.reconRun.findMany({ where: { tenantId: tenant.id } });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ actorLabel: "scheduler", status: "DONE", source: "API" });
    expect(runStarter(runs[0]!).kind).toBe("schedule");
    expect(runs[0]!.windowTo.getTime() - runs[0]!.windowFrom.getTime()).toBe(3 * 86_400_000);
    expect(await runDueReconciliations(new Date(at.getTime() + 3600_000))).toEqual([]);
  });
});

describe("run windows and who started a run", () => {
  it("a window never ends after its run started; one starting later is nothing to run", () => {
    const start = new Date("2026-12-04T14:00:00Z");
    const today = { from: new Date("2026-12-04T00:00:00Z"), to: new Date("2026-12-05T00:00:00Z") };
    expect(windowEndingBy(today, start)).toEqual({ from: today.from, to: start });
    const yesterday = { from: new Date("2026-12-03T00:00:00Z"), to: new Date("2026-12-04T00:00:00Z") };
    expect(windowEndingBy(yesterday, start)).toEqual(yesterday);
    expect(windowEndingBy({ from: start, to: today.to }, start)).toBeNull();
  });

  it("a person's run of today ends when it started, is labelled with the person, and one of tomorrow is refused and audited", async () => {
    const midnight = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()));
    const person = { type: "USER" as const, id: undefined, label: "alice@example.test" };
    const r = await startReconciliation({
      tenantId: tenant.id,
      provider: "stripe",
      window: { from: midnight, to: new Date(midnight.getTime() + 86_400_000) },
      source: { kind: "api" },
      actor: person,
    });
    expect(r.ok).toBe(true);
    const run = await prisma.reconRun.findUniqueOrThrow({ where: { id: r.ok ? r.value.runId : 0n } });
    expect(run.windowTo.getTime()).toBeLessThanOrEqual(run.startedAt.getTime());
    expect(run.windowFrom).toEqual(midnight);
    expect(runStarter(run)).toEqual({ kind: "person", label: "alice@example.test" });

    const tomorrow = new Date(midnight.getTime() + 86_400_000);
    const refused = await startReconciliation({
      tenantId: tenant.id,
      provider: "stripe",
      window: { from: tomorrow, to: new Date(tomorrow.getTime() + 86_400_000) },
      source: { kind: "api" },
      actor: person,
    });
    expect(refused).toMatchObject({ ok: false, reason: "bad_window" });
    expect(
      await prisma.auditLog.count({
        where: {
          tenantId: tenant.id,
          action: "recon.run_refused",
          details: { path: ["refused"], equals: "bad_window" },
        },
      }),
    ).toBe(1);
  });

  it("the schedule's run says it is the daily run; the demo's, holding the day's slot, says the demo started it", () => {
    const day = new Date("2026-12-04T00:00:00Z");
    expect(runStarter({ actorType: "SYSTEM", actorLabel: "scheduler", scheduledFor: day })).toEqual({
      kind: "schedule",
      label: "the daily schedule, for 2026-12-04",
    });
    expect(runStarter({ actorType: "SYSTEM", actorLabel: "demo", scheduledFor: day })).toEqual({
      kind: "demo",
      label: "the demo, at start-up",
    });
    expect(runStarter({ actorType: "CLI", actorLabel: "cli:root", scheduledFor: null })).toEqual({
      kind: "cli",
      label: "the CLI (cli:root)",
    });
  });
});
