import { describe, expect, it } from "vitest";
import { Histogram } from "prom-client";
import { estimateQuantile, sloTone } from "@/lib/views/ack-latency";
import { cumulativeBuckets, HistogramWindows } from "@/lib/platform/histogram-windows";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { pickUpReceived } from "@/lib/pipeline/claim";
import { Prisma, prisma } from "@/lib/platform/db";
import { metrics } from "@/lib/platform/metrics";
import { chartSeries, overview, type Overview } from "@/lib/views/overview";
import { GET as overviewRoute } from "@/app/api/v1/tenants/[tenant]/overview/route";
import { createApiToken } from "@/lib/auth/api-tokens";
import type { DiscrepancyBucket, DiscrepancyCause } from "@/lib/generated/prisma/enums";
import { reprocessEvent } from "@/lib/pipeline/reprocess";
import { listStuck } from "@/lib/views/stuck-claims";
import { aStripePayment, aStripeRefund, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { drain } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";

const DAY = 86_400_000;
const STALE = 300_000;

describe("the p99 estimate from histogram buckets", () => {
  it("interpolates inside the bucket holding the 99th percentile, says 'above' past the last finite bucket, and nothing without data", () => {
    // 100 observations: 90 ≤ 10 ms, 10 between 10 and 50 ms. Rank 99 is the 9th of those 10: 10 + 40 × 9/10 ms.
    const buckets = [
      { le: 0.01, count: 90 },
      { le: 0.05, count: 100 },
      { le: Infinity, count: 100 },
    ];
    const p99 = estimateQuantile(buckets, 0.99);
    expect(p99.kind).toBe("estimate");
    expect(p99.kind === "estimate" && p99.seconds).toBeCloseTo(0.046, 6);
    expect(p99).toMatchObject({ bucket: { from: 0.01, to: 0.05 } });
    expect(
      estimateQuantile(
        [
          { le: 0.01, count: 10 },
          { le: 2.5, count: 10 },
          { le: Infinity, count: 1000 },
        ],
        0.99,
      ),
    ).toEqual({ kind: "above", seconds: 2.5 });
    expect(
      estimateQuantile(
        [
          { le: 0.01, count: 0 },
          { le: Infinity, count: 0 },
        ],
        0.99,
      ),
    ).toEqual({ kind: "none" });
  });
});

describe("the rolling ack p99", () => {
  const MIN = 60_000;
  // The product's own buckets and registry-less histogram: real observations, real prom-client arithmetic.
  const aHistogram = () =>
    new Histogram({
      name: `ack_${Math.random().toString(36).slice(2)}`,
      help: "test",
      labelNames: ["provider"] as const,
      buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [],
    });

  it("leaves a start-up burst out of the last 15 minutes once it is older than that, while the 24-hour window still holds it", async () => {
    const h = aHistogram();
    const windows = new HistogramWindows({ everyMs: MIN, keep: 1442 });
    const t0 = Date.UTC(2026, 11, 4, 9, 0);
    windows.record(t0, []);
    // The start-up burst: 300 deliveries acknowledged in 300–480 ms (a cold process, the demo's first day at once).
    for (let i = 0; i < 300; i++) h.observe({ provider: "stripe" }, 0.3 + (i % 10) * 0.02);
    // A snapshot a minute, for 20 minutes of steady traffic at 2–9 ms, some of it Standard Webhooks.
    for (let minute = 1; minute <= 20; minute++) {
      windows.record(t0 + minute * MIN, await cumulativeBuckets(h));
      for (let i = 0; i < 30; i++) h.observe({ provider: i % 3 ? "stripe" : "standard" }, 0.002 + (i % 8) * 0.001);
    }
    const now = t0 + 20 * MIN + 30_000;
    const current = await cumulativeBuckets(h);
    const recent = windows.window(now, 15 * MIN, current);
    // The newest snapshot at or before now − 15 min is minute 5: minutes 5..20 of steady traffic, 16 × 30.
    expect(recent.from).toBe(t0 + 5 * MIN);
    expect(recent.count).toBe(16 * 30);
    const p99 = estimateQuantile(recent.buckets, 0.99);
    expect(p99.kind === "estimate" && p99.seconds).toBeLessThanOrEqual(0.01);
    expect(sloTone(p99, 0.05)).toBe("good");

    const day = windows.window(now, 86_400_000, current);
    expect(day.from).toBe(t0);
    expect(day.count).toBe(300 + 20 * 30);
    expect(sloTone(estimateQuantile(day.buckets, 0.99), 0.05)).toBe("bad");
  });

  it("says 'bad' for a window whose p99 is past the last bucket, 'none' for a quiet one, and keeps no more snapshots than asked", async () => {
    const h = aHistogram();
    const windows = new HistogramWindows({ everyMs: MIN, keep: 3 });
    const t0 = 1_000_000;
    windows.record(t0, []);
    for (let i = 0; i < 10; i++) h.observe({ provider: "stripe" }, 4);
    expect(
      sloTone(estimateQuantile(windows.window(t0 + MIN, 15 * MIN, await cumulativeBuckets(h)).buckets, 0.99), 0.05),
    ).toBe("bad");
    for (let m = 1; m <= 10; m++) windows.record(t0 + m * MIN, await cumulativeBuckets(h));
    expect(windows.size).toBe(3);
    const quiet = windows.window(t0 + 10 * MIN, 15 * MIN, await cumulativeBuckets(h));
    // Only minutes 8–10 are kept: the window is honest about starting there.
    expect(quiet.from).toBe(t0 + 8 * MIN);
    expect(quiet.count).toBe(0);
    expect(sloTone(estimateQuantile(quiet.buckets, 0.99), 0.05)).toBe("none");
    // A timer firing a little early still records; a second call within half an interval does not.
    windows.record(t0 + 11 * MIN - 2000, await cumulativeBuckets(h));
    windows.record(t0 + 11 * MIN, await cumulativeBuckets(h));
    expect(windows.window(t0 + 11 * MIN, 0, []).from).toBe(t0 + 11 * MIN - 2000);
  });
});

describe("the chart series", () => {
  it("keeps days never reconciled as unknown, not zero, and averages the last seven reconciled days", () => {
    const from = new Date("2026-11-01T00:00:00Z");
    const to = new Date("2026-11-05T00:00:00Z");
    const points = [
      {
        provider: "stripe" as const,
        day: "2026-10-28",
        compared: 100,
        discrepancies: 10,
        theirsNotOurs: 10,
        oursNotTheirs: 0,
        mismatched: 0,
        byCause: { CONFLICT: 10 },
      },
      {
        provider: "stripe" as const,
        day: "2026-11-01",
        compared: 100,
        discrepancies: 4,
        theirsNotOurs: 4,
        oursNotTheirs: 0,
        mismatched: 0,
        byCause: { NEVER_DELIVERED: 3, PARSE_FAILED: 1 },
      },
      {
        provider: "standard" as const,
        day: "2026-11-01",
        compared: 100,
        discrepancies: 2,
        theirsNotOurs: 1,
        oursNotTheirs: 1,
        mismatched: 0,
        byCause: { NEVER_DELIVERED: 1, LATE: 1 },
      },
      {
        provider: "stripe" as const,
        day: "2026-11-03",
        compared: 100,
        discrepancies: 0,
        theirsNotOurs: 0,
        oursNotTheirs: 0,
        mismatched: 0,
        byCause: {},
      },
    ];
    const s = chartSeries(points, from, to);
    expect(s.providers).toEqual(["standard", "stripe"]);
    expect(s.days.map((d) => [d.day, d.total, d.average7])).toEqual([
      ["2026-11-01", 6, 8], // (10 + 6) / 2: 10-28 is within the seven days ending 11-01
      ["2026-11-02", null, 8],
      ["2026-11-03", 0, 5.3], // (10 + 6 + 0) / 3
      ["2026-11-04", null, 3], // 10-28 has left the seven days: (6 + 0) / 2
    ]);
    expect(s.days[2]!.byProvider).toEqual({ standard: null, stripe: 0 });
    expect(s).toMatchObject({ total: 6, reconciledDays: 2 });
    // By cause, over the providers reconciled that day; 10-28's conflicts are before the range: not a series.
    expect(s.causes).toEqual(["NEVER_DELIVERED", "PARSE_FAILED", "LATE"]);
    expect(s.days.map((d) => d.byCause)).toEqual([{ NEVER_DELIVERED: 4, PARSE_FAILED: 1, LATE: 1 }, null, {}, null]);
    expect(s.days[0]!.byKind).toEqual({ theirsNotOurs: 5, oursNotTheirs: 1, mismatched: 0, other: 0 });
  });
});

async function seedHistory(tenant: TestTenant, perDay: (i: number) => number, days: number) {
  const today = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()));
  const run = await prisma.reconRun.create({
    data: {
      tenantId: tenant.id,
      provider: "stripe",
      windowFrom: new Date(today.getTime() - days * DAY),
      windowTo: today,
      source: "API",
      actorType: "SYSTEM",
      actorLabel: "test",
      status: "DONE",
    },
  });
  for (let i = 0; i < days; i++) {
    const day = new Date(today.getTime() - (days - i) * DAY);
    await prisma.reconDayStat.create({ data: { tenantId: tenant.id, provider: "stripe", day, compared: 100 } });
    await prisma.reconDiscrepancy.createMany({
      data: Array.from({ length: perDay(i) }, (_, n) => ({
        tenantId: tenant.id,
        provider: "stripe" as const,
        reference: `hist_${i}_${n}`,
        bucket: "THEIRS_NOT_OURS" as const,
        cause: "NEVER_DELIVERED" as const,
        state: "RESOLVED" as const,
        day,
        theirAmount: 100n,
        theirCurrency: "USD",
        firstRunId: run.id,
        lastRunId: run.id,
      })),
    });
  }
}

describe("the overview", () => {
  it("a constant non-zero rate reads as a defect; a falling one as falling", async () => {
    const flat = await aTenant();
    await seedHistory(flat, () => 3, 30);
    const o = await overview(flat.id, { days: 30, staleMs: STALE });
    expect(o.verdict).toMatchObject({ verdict: "flat", meanPerDay: 3, reading: expect.stringContaining("defect") });
    expect(o.series.total).toBe(87); // 29 of the 30 seeded days fall in the range ending today
    const falling = await aTenant();
    await seedHistory(falling, (i) => 30 - i, 30);
    expect((await overview(falling.id, { days: 30, staleMs: STALE })).verdict.verdict).toBe("falling");
  });

  it("counts today's events, this tenant's outbox, stuck work, open cases and uncleared alerts, and nothing of another tenant's", async () => {
    const tenant = await aTenant();
    const other = await aTenant();
    const { processOnce } = await import("@/lib/pipeline/worker");
    // The other tenant's two payments are posted, their receipts queued but not yet sent.
    for (let i = 0; i < 2; i++) expect((await deliver(stripeRequest(other, aStripePayment()))).status).toBe(200);
    await deliver(stripeRequest(other, "{not json"));
    while ((await processOnce(() => undefined)) > 0);
    // This tenant's payment is claimed by a "worker" that then vanished an hour ago; another delivery does not parse.
    expect((await deliver(stripeRequest(tenant, aStripePayment()))).status).toBe(200);
    await pickUpReceived(100);
    await prisma.$executeRaw(
      Prisma.sql`UPDATE processed_events SET claimed_at = now() - interval '1 hour' WHERE tenant_id = ${tenant.id}::uuid`,
    );
    await deliver(stripeRequest(tenant, "{not json"));
    while ((await processOnce(() => undefined)) > 0);
    await prisma.alert.create({
      data: { tenantId: tenant.id, provider: "stripe", kind: "webhook_silence", message: "stripe went quiet" },
    });
    await prisma.alert.create({
      data: {
        tenantId: tenant.id,
        provider: "stripe",
        kind: "webhook_silence",
        message: "cleared",
        clearedAt: new Date(),
      },
    });

    const o = await overview(tenant.id, { days: 30, staleMs: STALE });
    expect(o.eventsToday).toMatchObject({ total: 2, webhooks: 2, fetched: 0 });
    expect(o.stuck).toMatchObject({ stale_claim: 1, failed_claim: 0, failed_event: 1, total: 2 });
    expect(o.outbox.pending).toBe(0);
    expect(o.alerts.map((a) => a.message)).toEqual(["stripe went quiet"]);
    expect(o.cases.total).toBe(0);

    const otherView = await overview(other.id, { days: 30, staleMs: STALE });
    expect(otherView).toMatchObject({
      eventsToday: { total: 3 },
      outbox: { pending: 2 },
      stuck: { total: 1 },
      alerts: [],
    });
    await drain();
    expect((await overview(other.id, { days: 30, staleMs: STALE })).outbox.pending).toBe(0);
  });

  it("estimates ack p99 from this process's histogram and says since when", async () => {
    // 3 slow acks in 100: the 99th-ranked one is slow (with one in 100 it would be the last fast one).
    for (let i = 0; i < 97; i++) metrics().ackLatency.observe({ provider: "stripe" }, 0.004);
    for (let i = 0; i < 3; i++) metrics().ackLatency.observe({ provider: "standard" }, 0.9);
    const o = await overview((await aTenant()).id, { days: 30, staleMs: STALE });
    // This process is younger than either window: both cover everything since the ring's first snapshot.
    expect(o.ack.recent.deliveries).toBeGreaterThanOrEqual(100);
    expect(o.ack.recent.p99.kind).toBe("estimate");
    expect(o.ack.recent.tone).toBe("bad");
    expect(o.ack.day.deliveries).toBe(o.ack.recent.deliveries);
    expect(o.ack.sloSeconds).toBe(0.05);
    expect(o.ack.recent.from.getTime()).toBeLessThanOrEqual(Date.now());
    expect(o.ack.since.getTime()).toBeLessThanOrEqual(Date.now());
  });
});

describe("stuck claims", () => {
  it("lists claims held past the threshold, failed claims and unparseable events; reprocessing one completes it exactly once", async () => {
    const tenant = await aTenant();
    const stale = aStripePayment({ amount: 1111n });
    const failed = aStripePayment({ amount: 2222n });
    for (const p of [stale, failed]) await deliver(stripeRequest(tenant, p));
    await pickUpReceived(100);
    await prisma.$executeRaw(
      Prisma.sql`UPDATE processed_events SET claimed_at = now() - interval '10 minutes' WHERE provider_reference = ${stale.data.object.id}`,
    );
    await prisma.$executeRaw(
      Prisma.sql`UPDATE processed_events SET status = 'FAILED', claimed_at = NULL, last_error = 'gave up' WHERE provider_reference = ${failed.data.object.id}`,
    );
    await prisma.$executeRaw(
      Prisma.sql`UPDATE raw_events SET status = 'FAILED', last_error = 'gave up' WHERE id = (SELECT raw_event_id FROM processed_events WHERE provider_reference = ${failed.data.object.id})`,
    );
    await deliver(stripeRequest(tenant, "{broken"));
    await drain();

    const items = await listStuck(tenant.id, STALE);
    expect(items.map((i) => [i.kind, i.reference])).toEqual([
      ["stale_claim", stale.data.object.id],
      ["failed_claim", failed.data.object.id],
      ["failed_event", null],
    ]);
    expect(items[1]).toMatchObject({ lastError: "gave up" });
    expect(await listStuck(tenant.id, 20 * 60_000)).toHaveLength(2); // under a 20-minute threshold the 10-minute claim is not stuck yet

    const target = items[1]!;
    expect(
      await reprocessEvent(tenant.id, target.rawEventId, SYSTEM_ACTOR, "payment confirmed at Stripe", STALE),
    ).toMatchObject({ ok: true, value: { action: "release-claims", claims: 1 } });
    await drain();
    expect(
      await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: failed.data.object.id } }),
    ).toBe(1);
    expect((await listStuck(tenant.id, STALE)).map((i) => i.kind)).toEqual(["stale_claim", "failed_event"]);
    expect(await reprocessEvent(tenant.id, target.rawEventId, SYSTEM_ACTOR, "again", STALE)).toMatchObject({
      ok: false,
      reason: "nothing_to_do",
    });
    expect(
      await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: failed.data.object.id } }),
    ).toBe(1);
  });

  it("lists a refund that has waited past the threshold for its payment, and drops it once the payment posts", async () => {
    const tenant = await aTenant();
    const payment = aStripePayment({ amount: 5000n, account: "acct_waits" });
    const refund = aStripeRefund({ payment: payment.data.object.id, amount: 500 });
    await deliver(stripeRequest(tenant, refund));
    await drain();
    expect(await listStuck(tenant.id, STALE)).toEqual([]); // a fresh wait is normal, not stuck
    await prisma.$executeRaw(
      Prisma.sql`UPDATE processed_events SET created_at = now() - interval '10 minutes' WHERE provider_reference = ${refund.data.object.id}`,
    );
    expect(await listStuck(tenant.id, STALE)).toMatchObject([
      {
        kind: "waiting_claim",
        reference: refund.data.object.id,
        lastError: expect.stringContaining(payment.data.object.id),
      },
    ]);
    expect((await overview(tenant.id, { days: 30, staleMs: STALE })).stuck).toMatchObject({
      waiting_claim: 1,
      total: 1,
    });
    await deliver(stripeRequest(tenant, payment));
    await drain();
    expect(await listStuck(tenant.id, STALE)).toEqual([]);
  });
});

describe("the trend by cause and its control limit, through the overview API", () => {
  type Seeded = { ago: number; compared: number; causes: Partial<Record<DiscrepancyCause, number>> };
  const BUCKET: Partial<Record<DiscrepancyCause, DiscrepancyBucket>> = {
    MISSING_AT_PROVIDER: "OURS_NOT_THEIRS",
    AMOUNT_DIFFERS: "MISMATCH",
    FEE: "MISMATCH",
    PAYOUT_RESIDUAL: "PAYOUT_RESIDUAL",
  };
  const today = () =>
    new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()));
  const dayAgo = (ago: number) => new Date(today().getTime() - ago * DAY);

  /** Day stats and discrepancy rows as a run writes them, for any mix of causes. */
  async function seed(tenant: TestTenant, provider: "stripe" | "standard", days: Seeded[]) {
    const run = await prisma.reconRun.create({
      data: {
        tenantId: tenant.id,
        provider,
        windowFrom: dayAgo(60),
        windowTo: today(),
        source: "API",
        actorType: "SYSTEM",
        actorLabel: "test",
        status: "DONE",
      },
    });
    await prisma.reconDayStat.createMany({
      data: days.map((d) => ({ tenantId: tenant.id, provider, day: dayAgo(d.ago), compared: d.compared })),
    });
    await prisma.reconDiscrepancy.createMany({
      data: days.flatMap((d) =>
        (Object.entries(d.causes) as [DiscrepancyCause, number][]).flatMap(([cause, n]) =>
          Array.from({ length: n }, (_, i) => ({
            tenantId: tenant.id,
            provider,
            reference: `${provider}_${d.ago}_${cause}_${i}`,
            bucket: BUCKET[cause] ?? ("THEIRS_NOT_OURS" as const),
            cause,
            day: dayAgo(d.ago),
            theirAmount: 100n,
            theirCurrency: "USD",
            firstRunId: run.id,
            lastRunId: run.id,
          })),
        ),
      ),
    });
    return run;
  }

  it("stacks each day by cause, and flags the one day above its p-chart limit with its rate and limit", async () => {
    const tenant = await aTenant();
    // 45 days of stripe at about 2%, on volumes from 100 to 290 a day, with causes mixed in.
    const days: Seeded[] = Array.from({ length: 45 }, (_, i) => {
      const ago = 45 - i;
      const compared = 100 + ((ago * 37) % 200);
      const n = Math.round(compared * 0.02);
      return {
        ago,
        compared,
        causes: { NEVER_DELIVERED: n - 1, PARSE_FAILED: ago % 3 === 0 ? 1 : 0, LATE: ago % 3 ? 1 : 0 },
      };
    });
    const spike = days.find((d) => d.ago === 5)!;
    spike.compared = 150;
    spike.causes = { NEVER_DELIVERED: 4, SIGNATURE_REFUSED: 14, FEE: 2 };
    // A quiet day's 1 in 10 is a high rate, but on 10 compared it is within the noise.
    const quiet = days.find((d) => d.ago === 3)!;
    quiet.compared = 10;
    quiet.causes = { MISSING_AT_PROVIDER: 1 };
    const run = await seed(tenant, "stripe", days);
    // Matched within tolerance is not a discrepancy; a payout residual is one (kind "payout or bank").
    await prisma.reconDiscrepancy.createMany({
      data: [
        { bucket: "WITHIN_TOLERANCE" as const, cause: "AMOUNT_DIFFERS" as const, reference: "pi_within_tolerance" },
        { bucket: "PAYOUT_RESIDUAL" as const, cause: "PAYOUT_RESIDUAL" as const, reference: "po_short" },
      ].map((r) => ({
        ...r,
        tenantId: tenant.id,
        provider: "stripe" as const,
        day: dayAgo(2),
        theirAmount: 1000n,
        theirCurrency: "USD",
        ourAmount: 999n,
        ourCurrency: "USD",
        firstRunId: run.id,
        lastRunId: run.id,
      })),
    });
    // standard has only three reconciled days: none of them can be judged.
    await seed(
      tenant,
      "standard",
      [1, 2, 4].map((ago) => ({ ago, compared: 50, causes: { NEVER_DELIVERED: 25 } })),
    );

    const token = await createApiToken({ tenant: tenant.slug, role: "ops" }, SYSTEM_ACTOR);
    if (!token.ok) throw new Error(token.message);
    const response = await overviewRoute(
      new Request(`http://tally.test/api/v1/tenants/${tenant.slug}/overview?days=30`, {
        headers: { authorization: `Bearer ${token.value.token}` },
      }),
      { params: Promise.resolve({ tenant: tenant.slug }) },
    );
    expect(response.status).toBe(200);
    const o = (await response.json()) as Overview;

    // The expected limit from the seeded figures themselves: the 30 days before the spike.
    const before = days.filter((d) => d.ago > 5 && d.ago <= 35);
    const sum = (ds: Seeded[]) => ds.reduce((a, d) => a + Object.values(d.causes).reduce((x, y) => x + y, 0), 0);
    const pBar = sum(before) / before.reduce((a, d) => a + d.compared, 0);
    const limit = pBar + 3 * Math.sqrt((pBar * (1 - pBar)) / 150);
    const spikeDay = dayAgo(5).toISOString().slice(0, 10);
    expect(o.control.breaches).toHaveLength(1);
    expect(o.control.breaches[0]).toMatchObject({
      provider: "stripe",
      day: spikeDay,
      compared: 150,
      discrepancies: 20,
    });
    expect(o.control.breaches[0]!.limit).toBeCloseTo(limit, 12);
    expect(o.control.breaches[0]!.text).toBe(`${spikeDay} stripe (rate 13.3% > limit ${(limit * 100).toFixed(1)}%)`);
    expect(o.control.notEnoughHistory).toEqual([{ provider: "standard", days: 3 }]);
    expect(o.control.judgedDays).toBe(30 - 1); // stripe's days in range, today not reconciled

    const spikeOnChart = o.series.days.find((d) => d.day === spikeDay)!;
    expect(spikeOnChart.byCause).toEqual({ NEVER_DELIVERED: 4, SIGNATURE_REFUSED: 14, FEE: 2 });
    expect(spikeOnChart.breaches).toEqual([{ provider: "stripe", text: o.control.breaches[0]!.text }]);
    expect(o.series.days.filter((d) => d.breaches.length).map((d) => d.day)).toEqual([spikeDay]);
    expect(o.series.causes).toEqual([
      "NEVER_DELIVERED",
      "SIGNATURE_REFUSED",
      "PARSE_FAILED",
      "LATE",
      "MISSING_AT_PROVIDER",
      "FEE",
      "PAYOUT_RESIDUAL",
    ]);
    // Each day's causes add up to its total.
    for (const d of o.series.days.filter((x) => x.total !== null))
      expect(Object.values(d.byCause ?? {}).reduce((a, b) => a + b, 0)).toBe(d.total);
    const twoDaysAgo = o.series.days.find((d) => d.day === dayAgo(2).toISOString().slice(0, 10))!;
    expect(twoDaysAgo.byCause).toMatchObject({
      PAYOUT_RESIDUAL: 1,
      NEVER_DELIVERED: 25 + days.at(-2)!.causes.NEVER_DELIVERED!,
    });
    expect(twoDaysAgo.byKind).toMatchObject({ other: 1, oursNotTheirs: 0 });
    expect(twoDaysAgo.total).toBe(25 + sum([days.at(-2)!]) + 1);
  });
});
