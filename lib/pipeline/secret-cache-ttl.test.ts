// The web process caches each endpoint's signing secrets for TALLY_SECRET_CACHE_TTL_MS
// (the rest of the suite runs with 0). Here with a real TTL: a secret that becomes
// active, or is revoked, in the database (as another process would do it, so no
// in-process forgetting) is still unseen just after the cache filled, and takes
// effect within the TTL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { addSecret, generateSecret } from "@/lib/admin/tenants";
import { forgetEndpoints } from "@/lib/pipeline/endpoint-cache";
import { config, resetConfigForTests } from "@/lib/platform/config";
import { Prisma, prisma } from "@/lib/platform/db";
import { aStripePayment, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { deliver } from "@/dev/testing/route";

const TTL_MS = 3000;
// Enough for a delivery on a busy 2-core machine, far below the TTL the test must tell apart.
const SLACK_MS = 1000;

let tenant: TestTenant;
beforeAll(async () => {
  process.env.TALLY_SECRET_CACHE_TTL_MS = String(TTL_MS);
  resetConfigForTests();
  tenant = await aTenant();
});
afterAll(() => {
  process.env.TALLY_SECRET_CACHE_TTL_MS = "0";
  resetConfigForTests();
});

const statusWith = async (secret: string) =>
  (await deliver(stripeRequest(tenant, aStripePayment(), { secret }))).status;

describe("the signing-secret cache, with a real TTL", () => {
  it("sees a secret activated and another revoked in the database no sooner than it must and within the TTL", async () => {
    expect(config().TALLY_SECRET_CACHE_TTL_MS).toBe(TTL_MS);
    const next = generateSecret("stripe");
    const added = await addSecret(tenant.slug, "stripe", next, {}, SYSTEM_ACTOR);
    if (!added.ok) throw new Error(added.message);
    const endpointId = added.value.endpointId;
    // Start: only the old secret active (the new one held back), nothing cached.
    await prisma.$executeRaw(
      Prisma.sql`UPDATE endpoint_secrets SET revoked_at = CASE WHEN id = ${added.value.secretId}::uuid THEN now() END, expires_at = NULL WHERE endpoint_id = ${endpointId}::uuid`,
    );
    forgetEndpoints();

    const filledAt = Date.now();
    expect(await statusWith(tenant.stripeSecret)).toBe(200);
    // Another process rotates: the new secret becomes active, the old one is revoked.
    await prisma.$executeRaw(
      Prisma.sql`UPDATE endpoint_secrets SET revoked_at = CASE WHEN id = ${added.value.secretId}::uuid THEN NULL ELSE now() END WHERE endpoint_id = ${endpointId}::uuid`,
    );
    // Just after: this process still answers from its cache (the TTL is real, not 0).
    expect(await statusWith(next)).toBe(401);
    expect(await statusWith(tenant.stripeSecret)).toBe(200);
    expect(Date.now() - filledAt).toBeLessThan(TTL_MS);

    // Then the change takes effect by the time the TTL has run out.
    let switchedAt: number | null = null;
    while (Date.now() - filledAt < TTL_MS + SLACK_MS) {
      if ((await statusWith(next)) === 200) {
        switchedAt = Date.now();
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(switchedAt, "the new secret was still refused after the TTL").not.toBeNull();
    expect(switchedAt! - filledAt).toBeGreaterThanOrEqual(TTL_MS);
    expect(await statusWith(tenant.stripeSecret)).toBe(401);
  });
});
