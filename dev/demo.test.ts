import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { DEMO_HISTORY_SOURCE, seedDemo, type DemoCredentials } from "@/dev/demo";
import { startLiveDemo } from "@/dev/demo-live";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { overview } from "@/lib/views/overview";
import { deliver } from "@/dev/testing/route";
import { startRouteServer } from "@/dev/testing/route-server";
import { startWorkerProcess, type WorkerProcess } from "@/dev/testing/worker-process";

const credentialsFile = path.join(mkdtempSync(path.join(os.tmpdir(), "tally-demo-")), "demo-credentials.json");
let creds: DemoCredentials;
let web: Awaited<ReturnType<typeof startRouteServer>>;
let worker: WorkerProcess;
const log: string[] = [];

beforeAll(async () => {
  creds = await seedDemo(credentialsFile);
  web = await startRouteServer(deliver, { health: true });
  // The scheduled daily run is off so only the demo's own run happens here.
  worker = startWorkerProcess({ TALLY_RECON_SCHEDULE: "off" });
  await worker.waitFor("worker.start");
});
afterAll(async () => {
  await worker?.kill("SIGTERM");
  await web?.close();
});

describe("npm start's demo data", () => {
  it("seeds 90 days of falling discrepancy history for two providers once, labelled as seeded", async () => {
    const tenant = await prisma.tenant.findUniqueOrThrow({ where: { slug: creds.tenant } });
    const runs = await prisma.reconRun.findMany({ where: { tenantId: tenant.id, sourceName: DEMO_HISTORY_SOURCE } });
    expect(runs.map((r) => r.provider).sort()).toEqual(["standard", "stripe"]);
    const count = await prisma.reconDiscrepancy.count({ where: { tenantId: tenant.id } });
    expect(count).toBeGreaterThan(500);
    expect(
      await prisma.reconDiscrepancy.count({
        where: { tenantId: tenant.id, NOT: { note: { contains: "seeded demo history" } } },
      }),
    ).toBe(0);
    await seedDemo(credentialsFile);
    expect(await prisma.reconDiscrepancy.count({ where: { tenantId: tenant.id } })).toBe(count);
    const o = await overview(tenant.id, { days: 90, staleMs: 300_000 });
    expect(o.series.providers).toEqual(["standard", "stripe"]);
    expect(o.series.reconciledDays).toBeGreaterThanOrEqual(88);
    expect(o.verdict.verdict).toBe("falling");
  });

  it("plays a day through the simulator once: deliveries, a payment Stripe never settled, and a run that fetches what was dropped and opens one case", async () => {
    const started = await startLiveDemo({ creds, webUrl: web.url, port: 0, log: (l) => log.push(l) });
    expect(started).not.toBeNull();
    await started!.played;
    const tenant = await prisma.tenant.findUniqueOrThrow({ where: { slug: creds.tenant } });
    const run = await prisma.reconRun.findFirstOrThrow({ where: { tenantId: tenant.id, actorLabel: "demo" } });
    // The demo's day runs ten minutes past its start, and a run's window ends by the
    // moment it started: what the simulator settles in those minutes is left for the
    // next run, so only the movements inside the window count here.
    const settled = started!.simulator.movements.filter((m) => m.created * 1000 < run.windowTo.getTime());
    const dropped = settled.length - run.matched;
    expect(run).toMatchObject({
      status: "DONE",
      provider: "stripe",
      oursNotTheirs: 1,
      mismatched: 0,
      silenceAlert: false,
    });
    expect(run.theirsNotOurs).toBe(dropped);
    expect(dropped).toBeGreaterThan(0);
    const cases = await prisma.case.findMany({ where: { tenantId: tenant.id }, include: { discrepancy: true } });
    expect(cases).toHaveLength(1);
    expect(cases[0]).toMatchObject({
      kind: "OURS_NOT_THEIRS",
      status: "OPEN",
      discrepancy: { ourAmount: 4200n, theirLine: null },
    });
    // The fetched events are posted by the worker through the normal path, each once.
    const fetched = await prisma.reconDiscrepancy.findMany({
      where: { tenantId: tenant.id, bucket: "THEIRS_NOT_OURS", firstRunId: run.id },
    });
    expect(fetched.every((d) => d.state === "FETCHED")).toBe(true);
    await expect
      .poll(
        async () => prisma.rawEvent.count({ where: { tenantId: tenant.id, source: "RECONCILIATION", status: "DONE" } }),
        { timeout: 30_000 },
      )
      .toBe(dropped);
    for (const d of fetched)
      expect(await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: d.reference } })).toBe(1);
    expect(await ledgerViolations(tenant.id)).toEqual([]);
    // The live day joins the seeded history on the overview; the story still reads "falling".
    const o = await overview(tenant.id, { days: 30, staleMs: 300_000 });
    expect(o.series.days.slice(-2).some((d) => d.total !== null)).toBe(true);
    expect(o.verdict.verdict).toBe("falling");

    // A restart brings the simulator back for the same day and plays nothing again.
    const before = {
      runs: await prisma.reconRun.count(),
      events: await prisma.rawEvent.count(),
      postings: await prisma.posting.count(),
    };
    const endpoint = await prisma.providerEndpoint.findUniqueOrThrow({
      where: { tenantId_provider: { tenantId: tenant.id, provider: "stripe" } },
    });
    await started!.simulator.close();
    const again = await startLiveDemo({ creds, webUrl: web.url, port: 0, log: (l) => log.push(l) });
    await again!.played;
    expect(again!.simulator.movements).toEqual(started!.simulator.movements);
    expect({
      runs: await prisma.reconRun.count(),
      events: await prisma.rawEvent.count(),
      postings: await prisma.posting.count(),
    }).toEqual(before);
    expect(
      (
        (await prisma.providerEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).settings as Record<
          string,
          unknown
        >
      ).demoDayStart,
    ).toBe((endpoint.settings as Record<string, unknown>).demoDayStart);
    await again!.simulator.close();
  });
});
