// Issue #17, item 1c: stored signatures are credentials (PayPal's admits any body
// with the same CRC-32; every one lets a reader replay its delivery). The events API
// says a signature was present and which check passed, and returns none of them,
// for every provider, while the stored bytes and headers stay as received.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { GET } from "@/app/api/v1/tenants/[tenant]/events/[id]/route";
import { createApiToken } from "@/lib/auth/api-tokens";
import { resetConfigForTests } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import {
  aStandardPayment,
  aStripePayment,
  aTenant,
  standardHeaders,
  stripeSignatureHeader,
  webhookRequest,
  type TestTenant,
} from "@/dev/testing/builders";
import {
  aFlutterwaveCharge,
  anAdyenBatch,
  anAdyenItem,
  anEndpoint,
  aPaypalCapture,
  aPaypalSigner,
  aPaystackCharge,
  paypalHeaders,
  paystackSignature,
  signedByAdyen,
  type PaypalSigner,
} from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";

let tenant: TestTenant;
let token: string;
let signer: PaypalSigner;
let server: Server;
const sent: { provider: string; body: string; headers: Record<string, string>; secrets: string[] }[] = [];

beforeAll(async () => {
  server = createServer((_req, res) => void res.writeHead(200).end(signer.certificatePem));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/certs/`;
  vi.stubEnv("TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES", base);
  resetConfigForTests();
  signer = aPaypalSigner({ certUrl: `${base}CERT-1` });
  tenant = await aTenant();
  const t = await createApiToken({ tenant: tenant.slug, role: "admin" }, SYSTEM_ACTOR);
  if (!t.ok) throw new Error(t.message);
  token = t.value.token;

  const adyenKey = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
  await anEndpoint(tenant, "adyen", { secret: adyenKey });
  const paystackKey = await anEndpoint(tenant, "paystack");
  const verifHash = await anEndpoint(tenant, "flutterwave");
  await anEndpoint(tenant, "paypal", { settings: { webhookId: "WH-SIGNATURES" } });

  const stripeBody = JSON.stringify(aStripePayment());
  const standardBody = JSON.stringify(aStandardPayment());
  const adyenItem = signedByAdyen(anAdyenItem(), adyenKey);
  const adyenBody = JSON.stringify(anAdyenBatch([adyenItem]));
  const paystackBody = JSON.stringify(aPaystackCharge());
  const flutterwaveBody = JSON.stringify(aFlutterwaveCharge());
  const paypalBody = JSON.stringify(aPaypalCapture());
  const cases = [
    {
      provider: "stripe",
      body: stripeBody,
      headers: { "stripe-signature": stripeSignatureHeader(stripeBody, tenant.stripeSecret) },
    },
    { provider: "standard", body: standardBody, headers: standardHeaders(standardBody, tenant.standardSecret) },
    {
      provider: "adyen",
      body: adyenBody,
      headers: {},
      inBody: (adyenItem.additionalData as { hmacSignature: string }).hmacSignature,
    },
    {
      provider: "paystack",
      body: paystackBody,
      headers: { "x-paystack-signature": paystackSignature(paystackBody, paystackKey) },
    },
    { provider: "flutterwave", body: flutterwaveBody, headers: { "verif-hash": verifHash } },
    {
      provider: "paypal",
      body: paypalBody,
      headers: paypalHeaders(paypalBody, signer, { webhookId: "WH-SIGNATURES" }),
    },
  ];
  for (const c of cases) {
    const res = await deliver(webhookRequest(tenant.slug, c.provider, c.body, c.headers));
    expect([c.provider, res.status]).toEqual([c.provider, 200]);
    const secrets = [
      ...Object.entries(c.headers)
        .filter(([k]) => /signature|sig$|hash/.test(k))
        .map(([, v]) => v),
      ...(c.inBody ? [c.inBody] : []),
    ];
    sent.push({ provider: c.provider, body: c.body, headers: c.headers, secrets });
  }
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  vi.unstubAllEnvs();
  resetConfigForTests();
});

async function shown(provider: string) {
  const row = await prisma.rawEvent.findFirstOrThrow({ where: { tenantId: tenant.id, provider: provider as never } });
  const res = await GET(
    new Request(`http://tally.test/api/v1/tenants/${tenant.slug}/events/${row.id}`, {
      headers: { authorization: `Bearer ${token}` },
    }),
    { params: Promise.resolve({ tenant: tenant.slug, id: row.id.toString() }) },
  );
  expect(res.status).toBe(200);
  return { row, text: await res.text() };
}

describe("GET /api/v1/tenants/{t}/events/{id} shows that a signature passed, never the signature", () => {
  for (const provider of ["stripe", "standard", "adyen", "paystack", "flutterwave", "paypal"]) {
    it(`${provider}: no signature value anywhere in the answer (text or base64), and the check that passed is named`, async () => {
      const delivery = sent.find((s) => s.provider === provider)!;
      expect(delivery.secrets.length).toBeGreaterThan(0);
      const { row, text } = await shown(provider);
      const answer = JSON.parse(text) as {
        event: {
          headers: Record<string, string>;
          signature: { present: boolean; verifiedBy: string };
          body: { text: string; base64: string };
        };
      };
      const decoded = Buffer.from(answer.event.body.base64, "base64").toString("utf8");
      for (const secret of delivery.secrets) {
        for (const part of secret.split(/[ ,=]/).filter((p) => p.length >= 16)) {
          expect(text).not.toContain(part);
          expect(decoded).not.toContain(part);
        }
      }
      expect(answer.event.signature).toMatchObject({ present: true, verifiedBy: expect.any(String) });
      // Identifiers that are not credentials are still shown, and the stored delivery is untouched.
      if (provider === "paypal")
        expect(answer.event.headers["paypal-transmission-id"]).toBe(delivery.headers["paypal-transmission-id"]);
      if (provider === "standard") expect(answer.event.headers["webhook-id"]).toBe(delivery.headers["webhook-id"]);
      expect(Buffer.from(row.rawBody!).toString("utf8")).toBe(delivery.body);
    });
  }

  it("adyen: the body is shown as received except the item's hmacSignature value", async () => {
    const delivery = sent.find((s) => s.provider === "adyen")!;
    const { text } = await shown("adyen");
    const body = (JSON.parse(text) as { event: { body: { text: string; redacted: boolean } } }).event.body;
    expect(body.redacted).toBe(true);
    expect(body.text).toBe(delivery.body.replace(delivery.secrets[0]!, "[redacted]"));
  });
});
