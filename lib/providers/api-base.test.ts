// Where a provider's API key may be sent (lib/providers/api-base.ts): an endpoint's
// apiBaseUrl pointed at someone else's host must not be sent the tenant's secret key.
import { afterEach, describe, expect, it, vi } from "vitest";
import { aTenant } from "@/dev/testing/builders";
import { type ReceivedRequest, startReceiver } from "@/dev/testing/receiver";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { updateEndpointSettings } from "@/lib/admin/tenants";
import { prisma } from "@/lib/platform/db";
import { resetConfigForTests } from "@/lib/platform/config";
import { providerApiBase } from "@/lib/providers/api-base";
import { paystackSettlement } from "@/lib/providers/paystack/settlement";
import { stripeSettlement } from "@/lib/providers/stripe/settlement";

const STRIPE = { provider: "Stripe", hosts: ["api.stripe.com"] };
const mode = (env: Record<string, string>) => {
  vi.unstubAllEnvs();
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  resetConfigForTests();
};
afterEach(() => {
  vi.unstubAllEnvs();
  resetConfigForTests();
});

describe("providerApiBase", () => {
  it("in production: the provider's own hosts over https, nothing else", () => {
    mode({ NODE_ENV: "production" });
    expect(providerApiBase("https://api.stripe.com", STRIPE)).toMatchObject({ ok: true });
    expect(providerApiBase("https://api.stripe.com/", STRIPE)).toMatchObject({ ok: true });
    for (const [text, says] of [
      ["https://collector.evil.test", "is not Stripe's API (api.stripe.com)"],
      ["https://api.stripe.com.evil.test", "is not Stripe's API"],
      ["https://api.stripe.com:8443", "is not Stripe's API"],
      ["http://api.stripe.com", "is not Stripe's API"],
      ["http://127.0.0.1:4010", "refused in production unless TALLY_ALLOW_INSECURE_SIMULATORS=1"],
      ["https://user:secret@api.stripe.com", "must not carry credentials"],
      ["api.stripe.com", "must be a URL"],
    ] as const)
      expect(providerApiBase(text, STRIPE), text).toMatchObject({ ok: false, message: expect.stringContaining(says) });
  });

  it("where simulators are allowed: any https host, plain http only to this machine", () => {
    for (const env of [
      { NODE_ENV: "development" },
      { NODE_ENV: "production", TALLY_ALLOW_INSECURE_SIMULATORS: "1" },
    ] as Record<string, string>[]) {
      mode(env);
      expect(providerApiBase("https://stripe-proxy.internal.test", STRIPE)).toMatchObject({ ok: true });
      expect(providerApiBase("http://127.0.0.1:4010", STRIPE)).toMatchObject({ ok: true });
      expect(providerApiBase("http://localhost:4010", STRIPE)).toMatchObject({ ok: true });
      expect(providerApiBase("http://stripe-sim.lan:4010", STRIPE)).toMatchObject({
        ok: false,
        message: expect.stringContaining("must be https"),
      });
    }
  });
});

describe("the settlement sources", () => {
  for (const [name, source, key] of [
    ["Stripe", stripeSettlement, "sk_test_not_for_you"],
    ["Paystack", paystackSettlement, "sk_test_paystack_not_for_you"],
  ] as const) {
    it(`${name}: in production a base that is not ${name}'s is refused before its key is sent anywhere`, async () => {
      const seen: ReceivedRequest[] = [];
      const receiver = await startReceiver(
        (r) => seen.push(r),
        () => ({ body: JSON.stringify({ data: [], has_more: false, status: true, meta: { pageCount: 1 } }) }),
      );
      try {
        const endpoint = {
          tenantId: "t",
          provider: "stripe" as const,
          settings: { apiKey: key, apiBaseUrl: receiver.base },
        };
        const window = { from: new Date(Date.now() - 86_400_000), to: new Date() };
        const drain = async () => {
          for await (const _ of source.lines(endpoint, window));
        };
        mode({ NODE_ENV: "production" });
        await expect(drain()).rejects.toThrow(`is not ${name}'s API`);
        expect(seen).toHaveLength(0);
        // Allowed for a simulator: the same call reaches it, with the key.
        mode({ NODE_ENV: "production", TALLY_ALLOW_INSECURE_SIMULATORS: "1" });
        await drain();
        expect(seen.length).toBeGreaterThan(0);
        expect(seen[0]!.headers.authorization).toBe(`Bearer ${key}`);
      } finally {
        await receiver.close();
      }
    });
  }
});

describe("saving an endpoint's settings", () => {
  it("in production an apiBaseUrl the key may not go to is refused with a 400 reason, and nothing is saved", async () => {
    const tenant = await aTenant();
    mode({ NODE_ENV: "production" });
    const refused = await updateEndpointSettings(
      tenant.slug,
      "stripe",
      { settings: { apiBaseUrl: "https://collector.evil.test", apiKey: "sk_live_x" } },
      SYSTEM_ACTOR,
    );
    expect(refused).toMatchObject({
      ok: false,
      reason: "invalid_url",
      message: expect.stringContaining("api.stripe.com"),
    });
    const stored = await prisma.providerEndpoint.findFirst({ where: { tenantId: tenant.id, provider: "stripe" } });
    expect(stored!.settings).toEqual({});
    expect(
      await updateEndpointSettings(
        tenant.slug,
        "stripe",
        { settings: { apiBaseUrl: "https://api.stripe.com" } },
        SYSTEM_ACTOR,
      ),
    ).toMatchObject({ ok: true });
  });
});
