import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aStripePayment, aTenant, stripeRequest, webhookRequest, type TestTenant } from "@/dev/testing/builders";
import { deliver } from "@/dev/testing/route";
import { resetConfigForTests } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { cachedEndpointCount, forgetEndpoints, lookupEndpoint } from "@/lib/pipeline/endpoint-cache";

const CAP = 200;
let tenant: TestTenant;

beforeAll(async () => {
  process.env.TALLY_ENDPOINT_CACHE_MAX = String(CAP);
  resetConfigForTests();
  forgetEndpoints();
  tenant = await aTenant();
});
afterAll(() => {
  delete process.env.TALLY_ENDPOINT_CACHE_MAX;
  resetConfigForTests();
  forgetEndpoints();
});

/** What an attacker sends: the longest slug a tenant could have, never the same twice. */
const aLongUnknownSlug = () => `x${randomBytes(31).toString("hex")}`.slice(0, 63);

async function inParallel(n: number, concurrency: number, send: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) await send(i);
    }),
  );
}

describe("the endpoint cache under unauthenticated traffic", () => {
  it("three thousand POSTs to unknown tenant slugs keep the cache at its cap, and a real tenant still verifies", async () => {
    const statuses = new Map<number, number>();
    await inParallel(3000, 16, async () => {
      const res = await deliver(
        webhookRequest(aLongUnknownSlug(), "stripe", "{}", { "stripe-signature": "t=1,v1=00" }),
      );
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    });
    expect(Object.fromEntries(statuses)).toEqual({ 404: 3000 });
    expect(cachedEndpointCount()).toBeLessThanOrEqual(CAP);
    expect(cachedEndpointCount()).toBeGreaterThan(CAP / 2);
    const res = await deliver(stripeRequest(tenant, aStripePayment()));
    expect(res.status).toBe(200);
  });

  it("a slug no tenant could have is refused without a lookup and without a cache entry", async () => {
    forgetEndpoints();
    let lookups = 0;
    const findUnique = prisma.tenant.findUnique;
    // Counts calls, then runs the real query.
    prisma.tenant.findUnique = ((...args: Parameters<typeof findUnique>) => {
      lookups++;
      return findUnique.apply(prisma.tenant, args);
    }) as unknown as typeof findUnique;
    try {
      const hostile = [
        "a".repeat(64),
        "x".repeat(5000),
        "Acme",
        "acme_ltd",
        "-acme",
        "acme-",
        "ac%00me",
        "café",
        `${"a".repeat(63)}\u0000stripe`,
        "",
      ];
      for (const slug of hostile)
        expect(await lookupEndpoint(slug, "stripe")).toEqual({ found: false, missing: "tenant" });
      const res = await deliver(webhookRequest(encodeURIComponent("Ünknown".repeat(500)), "stripe", "{}", {}));
      expect(res.status).toBe(404);
      expect(lookups).toBe(0);
      expect(cachedEndpointCount()).toBe(0);
      // The longest valid slug is still looked up.
      expect(await lookupEndpoint("a".repeat(63), "stripe")).toEqual({ found: false, missing: "tenant" });
      expect(lookups).toBe(1);
    } finally {
      prisma.tenant.findUnique = findUnique;
    }
  });
});
