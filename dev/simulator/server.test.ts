// The provider simulator plays every provider of a tenant's day: it signs each
// delivery as its provider does, serves the PayPal certificate and Flutterwave's
// verify endpoint the product calls back, and what it did not drop is what posts.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { resetConfigForTests } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { carriedMovements, expectedBalances, generateDay, type Day } from "@/dev/simulator/day";
import { startSimulator, type DeliveryReport, type Simulator } from "@/dev/simulator/server";
import type { TenantSecrets } from "@/dev/simulator/sign";
import { aTenant, type TestTenant } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { anEndpoint } from "@/dev/testing/provider-builders";
import { startRouteServer } from "@/dev/testing/route-server";
import { exportLedger } from "@/lib/ledger/export";

let tenant: TestTenant;
let day: Day;
let sim: Simulator;
let route: Awaited<ReturnType<typeof startRouteServer>>;
let report: DeliveryReport;

beforeAll(async () => {
  tenant = await aTenant();
  day = generateDay({
    seed: 8,
    events: 300,
    tenants: [tenant.slug],
    dayStart: Date.UTC(2026, 11, 2) / 1000,
    dropRate: 0.05,
  });
  sim = await startSimulator({ day, tenant: tenant.slug });
  vi.stubEnv("TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES", `${sim.url}/`);
  resetConfigForTests();
  const webhookId = "WH-SIMULATOR-TEST-0001";
  await anEndpoint(tenant, "paypal", {
    settings: { webhookId, clientId: sim.paypalClientId, clientSecret: sim.paypalClientSecret, apiBaseUrl: sim.url },
  });
  const secrets: TenantSecrets = {
    stripe: tenant.stripeSecret,
    standard: tenant.standardSecret,
    adyen: await anEndpoint(tenant, "adyen"),
    paystack: await anEndpoint(tenant, "paystack"),
    flutterwave: await anEndpoint(tenant, "flutterwave", {
      settings: { secretKey: sim.flutterwaveKey, apiBaseUrl: sim.url },
    }),
    paypal: webhookId,
  };
  route = await startRouteServer();
  report = await sim.deliver(route.url, secrets, { ackTimeoutMs: 30_000 });
  await drainAll();
});

afterAll(async () => {
  await route?.close();
  await sim?.close();
  vi.unstubAllEnvs();
  resetConfigForTests();
});

describe("the provider simulator with all six providers", () => {
  it("delivers every provider's webhooks signed as that provider signs them, refusals only where it signed badly", () => {
    expect(new Set(day.deliveries.map((d) => d.provider)).size).toBe(6);
    const badlySigned = day.deliveries.filter((d) => d.signature === "invalid").length;
    expect(report.byStatus).toEqual({
      200: report.deliveries - badlySigned,
      ...(badlySigned > 0 && { 401: badlySigned }),
    });
    expect(report.dropped.length + report.droppedElsewhere.length).toBe(day.dropped.length);
    expect(report.droppedElsewhere.length).toBeGreaterThan(0);
  });

  it("posts what it delivered, Flutterwave's confirmed through its verify endpoint, and nothing it dropped", async () => {
    const dropped = new Set(day.dropped);
    const delivered = day.movements.filter((m) => !dropped.has(m));
    const ledger = await exportLedger(tenant.id, tenant.slug);
    // And Stripe's payouts of the day, delivered as payout.paid once the rest was sent.
    expect(ledger.postings.map((p) => `${p.provider}:${p.reference}:${p.kind}`).sort()).toEqual(
      [
        ...delivered.map((m) => `${m.provider}:${m.reference}:${m.kind}`),
        // PayPal's captures carry their fee.
        ...carriedMovements(delivered).map((c) => `${c.provider}:${c.reference}:${c.kind}`),
        ...sim.payouts.map((p) => `stripe:${p.id}:PAYOUT`),
      ].sort(),
    );
    const balances = new Map(
      ledger.balances
        .filter((b) => b.account.startsWith("customer:"))
        .map((b) => [`${tenant.slug}|${b.account}|${b.currency}`, BigInt(b.amount)]),
    );
    expect(balances).toEqual(new Map([...expectedBalances(delivered)].filter(([, v]) => v !== 0n)));
    expect(
      await prisma.processedEvent.count({ where: { tenantId: tenant.id, provider: "flutterwave", status: "DONE" } }),
    ).toBe(delivered.filter((m) => m.provider === "flutterwave").length);
    expect(
      await prisma.processedEvent.count({ where: { tenantId: tenant.id, provider: "paypal", status: "DONE" } }),
    ).toBe(
      delivered.filter((m) => m.provider === "paypal").length +
        carriedMovements(delivered).filter((c) => c.provider === "paypal").length,
    );
  });

  it("still answers Stripe's settlement API with the key, and refuses without it", async () => {
    expect((await fetch(`${sim.url}/v1/balance_transactions?limit=1`)).status).toBe(401);
    const page = await fetch(`${sim.url}/v1/balance_transactions?limit=1`, {
      headers: { authorization: `Bearer ${sim.apiKey}` },
    });
    expect(page.status).toBe(200);
    expect(
      (
        await fetch(`${sim.url}/v3/transactions/1/verify`, {
          headers: { authorization: "Bearer FLWSECK_TEST-someone-else-X" },
        })
      ).status,
    ).toBe(401);
  });
});
