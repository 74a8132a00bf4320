// The rules read the same figures as the screens they link to: each condition
// built the way it arises (a worker that dies holding a claim, a claim that gave
// up, the reconciliation's silence alert, a flat discrepancy rate, a failed or
// missing daily run) opens its finding with the right link, and its end clears it.
import { beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { updateEndpointSettings } from "@/lib/admin/tenants";
import { evaluateRules, type Finding } from "@/lib/alerts/rules";
import { aStripePayment, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { deliver } from "@/dev/testing/route";
import { resetConfigForTests } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { pickUpReceived } from "@/lib/pipeline/claim";

beforeAll(() => {
  process.env.TALLY_PUBLIC_URL = "https://tally.example.test";
  resetConfigForTests();
  return () => {
    delete process.env.TALLY_PUBLIC_URL;
    resetConfigForTests();
  };
});

const rules = async (t: TestTenant, now?: Date) =>
  (await evaluateRules(t, now)).findings.map((f: Finding) => ({ rule: f.rule, subject: f.subject, link: f.link }));

/** A delivery claimed by a worker that then died: CLAIMED, held since `heldMs` ago. */
async function abandonedClaim(t: TestTenant, reference: string, heldMs: number) {
  expect((await deliver(stripeRequest(t, aStripePayment({ reference })))).status).toBe(200);
  await pickUpReceived();
  const claim = await prisma.processedEvent.findFirstOrThrow({
    where: { tenantId: t.id, providerReference: reference },
  });
  expect(claim.status).toBe("CLAIMED");
  await prisma.processedEvent.update({ where: { id: claim.id }, data: { claimedAt: new Date(Date.now() - heldMs) } });
  return claim.id;
}

describe("alert rules", () => {
  it("a claim held past the stale threshold is stuck; once it gave up it is failed instead", async () => {
    const t = await aTenant();
    expect(await rules(t)).toEqual([]);
    const id = await abandonedClaim(t, "pi_rule_stuck", 3600_000);
    expect(await rules(t)).toEqual([
      { rule: "stuck_claims", subject: "all", link: `https://tally.example.test/t/${t.slug}/claims` },
    ]);
    await prisma.processedEvent.update({ where: { id }, data: { status: "FAILED" } });
    expect((await rules(t)).map((f) => f.rule)).toEqual(["failed_claims"]);
  });

  it("more refused deliveries from a provider in the last hour than the threshold open refused_deliveries; older ones do not", async () => {
    const t = await aTenant();
    const refuse = async (n: number) => {
      for (let i = 0; i < n; i++)
        expect((await deliver(stripeRequest(t, aStripePayment(), { secret: "whsec_rotated_elsewhere" }))).status).toBe(
          401,
        );
    };
    await refuse(5);
    expect(await rules(t)).toEqual([]);
    await refuse(1);
    const [finding, ...others] = (await evaluateRules(t)).findings;
    expect(others).toEqual([]);
    expect(finding).toMatchObject({
      rule: "refused_deliveries",
      subject: "stripe",
      link: `https://tally.example.test/t/${t.slug}/events/refused`,
    });
    expect(finding!.message).toContain("6 deliveries");
    expect(finding!.message).toContain("no_signature_matched, likely wrong_secret");
    // An hour later the same refusals are history: the alert clears.
    expect(await rules(t, new Date(Date.now() + 3600_000 + 1000))).toEqual([]);
  });

  it("a claim held for less than the stale threshold is not stuck", async () => {
    const t = await aTenant();
    await abandonedClaim(t, "pi_rule_fresh", 1000);
    expect(await rules(t)).toEqual([]);
  });

  it("the reconciliation's webhook-silence alert is a finding per provider until it is cleared", async () => {
    const t = await aTenant();
    const a = await prisma.alert.create({
      data: { tenantId: t.id, provider: "stripe", kind: "webhook_silence", message: "stripe settled 40, Tally got 0" },
    });
    const found = (await evaluateRules(t)).findings;
    expect(found).toMatchObject([
      { rule: "webhook_silence", subject: "stripe", message: "stripe settled 40, Tally got 0" },
    ]);
    expect(found[0]!.link).toBe(`https://tally.example.test/t/${t.slug}`);
    await prisma.alert.update({ where: { id: a.id }, data: { clearedAt: new Date() } });
    expect(await rules(t)).toEqual([]);
  });

  it("a flat non-zero discrepancy rate over three reconciled days is a finding; two days are too few to judge", async () => {
    const t = await aTenant();
    const run = await prisma.reconRun.create({
      data: {
        tenantId: t.id,
        provider: "stripe",
        windowFrom: new Date(Date.now() - 4 * 86_400_000),
        windowTo: new Date(),
        source: "API",
        actorType: "SYSTEM",
        actorLabel: "test",
        status: "DONE",
      },
    });
    const day = (ago: number) => new Date(`${new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10)}`);
    const found = (n: number, ago: number) =>
      Array.from({ length: n }, (_, i) => ({
        tenantId: t.id,
        provider: "stripe" as const,
        reference: `pi_trend_${ago}_${i}`,
        bucket: "OURS_NOT_THEIRS" as const,
        cause: "MISSING_AT_PROVIDER" as const,
        ourAmount: 1250n,
        ourCurrency: "USD",
        day: day(ago),
        firstRunId: run.id,
        lastRunId: run.id,
      }));
    await prisma.reconDiscrepancy.createMany({ data: [...found(2, 3), ...found(2, 2)] });
    // Two days: too few to judge.
    expect(await rules(t)).toEqual([]);
    await prisma.reconDiscrepancy.createMany({ data: found(2, 1) });
    expect(await rules(t)).toEqual([
      { rule: "discrepancy_trend", subject: "stripe", link: `https://tally.example.test/t/${t.slug}` },
    ]);
  });

  it("a scheduled provider's daily run that failed, or has not run two hours after it was due, is a finding", async () => {
    const t = await aTenant();
    const r = await updateEndpointSettings(t.slug, "stripe", { settings: { apiKey: "sk_test_rules" } }, SYSTEM_ACTOR);
    expect(r.ok).toBe(true);
    const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
    const at = (h: number) => new Date(today.getTime() + h * 3600_000);
    // Due at 02:00 UTC (the default): at 03:00 still within the grace, at 04:30 overdue.
    expect(await rules(t, at(3))).toEqual([]);
    const link = `https://tally.example.test/t/${t.slug}/reconciliation`;
    expect(await rules(t, at(4.5))).toEqual([{ rule: "recon_run", subject: "stripe", link }]);
    const run = await prisma.reconRun.create({
      data: {
        tenantId: t.id,
        provider: "stripe",
        windowFrom: new Date(today.getTime() - 3 * 86_400_000),
        windowTo: today,
        source: "API",
        actorType: "SYSTEM",
        actorLabel: "scheduler",
        status: "DONE",
        scheduledFor: today,
        startedAt: at(2),
      },
    });
    expect(await rules(t, at(4.5))).toEqual([]);
    await prisma.reconRun.update({ where: { id: run.id }, data: { status: "FAILED", error: "provider answered 401" } });
    const failed = (await evaluateRules(t, at(4.5))).findings;
    expect(failed).toMatchObject([{ rule: "recon_run", subject: "stripe", title: "stripe reconciliation failed" }]);
    expect(failed[0]!.message).toContain("provider answered 401");
  });
});
