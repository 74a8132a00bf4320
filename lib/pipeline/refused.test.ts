// Refused deliveries kept by the acknowledgement (lib/pipeline/refused.ts), through the real
// webhook route and PostgreSQL: what is kept, what is not, and the bounds that keep a flood
// of unsigned requests from becoming a flood of writes.
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { aStripePayment, aTenant, stripeRequest, webhookRequest } from "@/dev/testing/builders";
import { deliver } from "@/dev/testing/route";
import { resetConfigForTests } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { metrics } from "@/lib/platform/metrics";
import { keepRefusal, pruneRefusals, resetRefusalBuckets } from "@/lib/pipeline/refused";

const unkept = async (why: string) =>
  (await metrics().webhooksRefusedUnkept.get()).values
    .filter((v) => v.labels.why === why)
    .reduce((sum, v) => sum + v.value, 0);

afterEach(() => {
  delete process.env.TALLY_REFUSED_KEEP_PER_MINUTE;
  delete process.env.TALLY_REFUSED_KEEP_PER_DAY;
  delete process.env.TALLY_REFUSED_BODY_KEEP_BYTES;
  resetConfigForTests();
  resetRefusalBuckets();
});

describe("a refused delivery", () => {
  it("is kept with its reason, hint, size, hash, headers and body, and still answered 401 with nothing stored as an event", async () => {
    const t = await aTenant();
    const event = aStripePayment({ reference: "pi_refusedKept01" });
    const res = await deliver(stripeRequest(t, event, { secret: "whsec_not_the_tenants" }));
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("no_signature_matched");
    expect(await prisma.rawEvent.count({ where: { tenantId: t.id } })).toBe(0);

    const [kept, ...more] = await prisma.refusedDelivery.findMany({ where: { tenantId: t.id } });
    expect(more).toHaveLength(0);
    const body = Buffer.from(JSON.stringify(event));
    expect(kept).toMatchObject({ provider: "stripe", reason: "no_signature_matched", hint: "wrong_secret" });
    expect(kept!.bodyBytes).toBe(body.length);
    expect(Buffer.from(kept!.bodySha256).equals(createHash("sha256").update(body).digest())).toBe(true);
    expect(Buffer.from(kept!.bodyHead).toString()).toContain("pi_refusedKept01");
    expect(Object.keys(kept!.headers as object)).toContain("stripe-signature");
  });

  it("keeps only the first TALLY_REFUSED_BODY_KEEP_BYTES of the body, and the size and hash of all of it", async () => {
    process.env.TALLY_REFUSED_BODY_KEEP_BYTES = "100";
    resetConfigForTests();
    const t = await aTenant();
    const body = JSON.stringify({ ...aStripePayment(), padding: "x".repeat(5_000) });
    expect((await deliver(stripeRequest(t, body, { secret: "whsec_wrong" }))).status).toBe(401);
    const kept = await prisma.refusedDelivery.findFirstOrThrow({ where: { tenantId: t.id } });
    expect(kept.bodyHead.length).toBe(100);
    expect(kept.bodyBytes).toBe(Buffer.byteLength(body));
    expect(Buffer.from(kept.bodySha256).equals(createHash("sha256").update(body).digest())).toBe(true);
  });

  it("is kept at most TALLY_REFUSED_KEEP_PER_MINUTE times a minute per endpoint; the rest are counted, and other endpoints keep theirs", async () => {
    process.env.TALLY_REFUSED_KEEP_PER_MINUTE = "5";
    resetConfigForTests();
    const [flooded, other] = [await aTenant(), await aTenant()];
    const before = await unkept("budget");
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => deliver(stripeRequest(flooded, aStripePayment(), { secret: "whsec_flood" }))),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(40).fill(401));
    expect(await prisma.refusedDelivery.count({ where: { tenantId: flooded.id } })).toBe(5);
    expect((await unkept("budget")) - before).toBe(35);
    // A signed delivery on the flooded endpoint is not held back by the flood.
    expect((await deliver(stripeRequest(flooded, aStripePayment()))).status).toBe(200);
    expect((await deliver(stripeRequest(other, aStripePayment(), { secret: "whsec_other" }))).status).toBe(401);
    expect(await prisma.refusedDelivery.count({ where: { tenantId: other.id } })).toBe(1);
  });

  it("is kept at most TALLY_REFUSED_KEEP_PER_DAY times a day per endpoint, however the minutes are spread", async () => {
    process.env.TALLY_REFUSED_KEEP_PER_MINUTE = "5";
    process.env.TALLY_REFUSED_KEEP_PER_DAY = "8";
    resetConfigForTests();
    const t = await aTenant();
    const body = Buffer.from("{}");
    const refusal = {
      tenantId: t.id,
      provider: "stripe" as const,
      reason: "no_signature_matched",
      hint: null,
      headers: {},
    };
    const start = Date.now();
    const kept: boolean[] = [];
    // Five an hour for three hours: within every minute's budget, past the day's.
    for (let hour = 0; hour < 3; hour++)
      for (let i = 0; i < 5; i++) kept.push(await keepRefusal({ ...refusal, body }, start + hour * 3_600_000 + i));
    expect(kept.filter(Boolean)).toHaveLength(8);
    expect(kept.slice(0, 8).every(Boolean)).toBe(true);
    // A day later the budget is back.
    expect(await keepRefusal({ ...refusal, body }, start + 2 * 86_400_000)).toBe(true);
    expect(await prisma.refusedDelivery.count({ where: { tenantId: t.id } })).toBe(9);
  });

  it("is not kept when no endpoint answers at the URL: there is no tenant to keep it for", async () => {
    const before = await prisma.refusedDelivery.count();
    const res = await deliver(webhookRequest("no-such-tenant-here", "stripe", JSON.stringify(aStripePayment()), {}));
    expect(res.status).toBe(404);
    expect(await prisma.refusedDelivery.count()).toBe(before);
  });

  it("is removed after TALLY_REFUSED_RETENTION_DAYS by the maintenance pass, newer ones kept", async () => {
    const t = await aTenant();
    for (let i = 0; i < 2; i++)
      expect((await deliver(stripeRequest(t, aStripePayment(), { secret: "whsec_old" }))).status).toBe(401);
    const [old] = await prisma.refusedDelivery.findMany({ where: { tenantId: t.id }, orderBy: { id: "asc" } });
    await prisma.refusedDelivery.update({
      where: { tenantId_id: { tenantId: t.id, id: old!.id } },
      data: { receivedAt: new Date(Date.now() - 15 * 86_400_000) },
    });
    expect(await pruneRefusals()).toBeGreaterThanOrEqual(1);
    expect((await prisma.refusedDelivery.findMany({ where: { tenantId: t.id } })).map((r) => r.id)).not.toContain(
      old!.id,
    );
    expect(await prisma.refusedDelivery.count({ where: { tenantId: t.id } })).toBe(1);
  });
});
