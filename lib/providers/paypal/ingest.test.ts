import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { resetConfigForTests } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { aTenant, webhookRequest, type TestTenant } from "@/dev/testing/builders";
import {
  aPaypalCapture,
  aPaypalSigner,
  anEndpoint,
  paypalHeaders,
  type PaypalSigner,
} from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";

// The route uses the real certificate fetcher; only the network under it is replaced,
// serving the test certificate at its (PayPal) URL and failing every other URL.
const webhookId = "WH-ID-0123456789ABCDEF";
let tenant: TestTenant;
let signer: PaypalSigner;
const fetchedUrls: string[] = [];
beforeAll(async () => {
  tenant = await aTenant();
  await anEndpoint(tenant, "paypal", { settings: { webhookId } });
  // A self-signed test certificate chains to no system CA, so it is served under a
  // simulator prefix (certificates.test.ts tests the chain check itself).
  vi.stubEnv("TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES", "https://certs.tally.test/paypal/");
  resetConfigForTests();
  signer = aPaypalSigner({ certUrl: "https://certs.tally.test/paypal/CERT-ingest-test" });
  vi.stubGlobal("fetch", async (input: URL | string) => {
    const url = String(input);
    fetchedUrls.push(url);
    if (url === signer.certUrl) return new Response(signer.certificatePem, { status: 200 });
    throw new TypeError("fetch failed: getaddrinfo ENOTFOUND");
  });
});
afterAll(() => {
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
  resetConfigForTests();
});

const stored = () => prisma.rawEvent.count({ where: { tenantId: tenant.id, provider: "paypal" } });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;
const post = (body: string, headers: Record<string, string>) =>
  deliver(webhookRequest(tenant.slug, "paypal", body, headers));

describe("POST /api/webhooks/{tenant}/paypal", () => {
  it("stores a signed capture byte for byte, with the transmission id, and answers 200", async () => {
    const body = JSON.stringify(aPaypalCapture(), null, 1);
    const headers = paypalHeaders(body, signer, { webhookId, transmissionId: "b2384410-f8d2-11e8-9b7d-5b3ad6fd6e4b" });
    const res = await post(body, headers);
    expect(res.status).toBe(200);
    const row = await prisma.rawEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, provider: "paypal" },
      orderBy: { id: "desc" },
    });
    expect(Buffer.from(row.rawBody!).equals(Buffer.from(body))).toBe(true);
    expect(row.deliveryId).toBe("b2384410-f8d2-11e8-9b7d-5b3ad6fd6e4b");
    expect(row.headers).toMatchObject({ "paypal-cert-url": signer.certUrl, "paypal-auth-algo": "SHA256withRSA" });
  });

  describe("refuses bad signatures with 401, storing nothing", () => {
    const body = () => JSON.stringify(aPaypalCapture());
    const cases: [string, () => [string, Record<string, string>], string, string][] = [
      [
        "missing headers",
        () => ["{}", {}],
        "missing_header",
        "Missing PAYPAL-TRANSMISSION-ID, PAYPAL-TRANSMISSION-TIME",
      ],
      [
        "tampered body",
        () => {
          const b = body();
          return [b.replace("30.00", "99.00"), paypalHeaders(b, signer, { webhookId })];
        },
        "no_signature_matched",
        "does not verify for this body and the endpoint's webhook id",
      ],
      [
        "another webhook id",
        () => {
          const b = body();
          return [b, paypalHeaders(b, signer, { webhookId: "SOMEONE-ELSES" })];
        },
        "no_signature_matched",
        "(hint: wrong_secret)",
      ],
      [
        "another key",
        () => {
          const b = body();
          return [b, paypalHeaders(b, { ...aPaypalSigner(), certUrl: signer.certUrl }, { webhookId })];
        },
        "no_signature_matched",
        "does not verify",
      ],
      [
        "certificate off PayPal",
        () => {
          const b = body();
          return [b, paypalHeaders(b, { ...signer, certUrl: "https://certs.evil.example/paypal.pem" }, { webhookId })];
        },
        "certificate_rejected",
        "is not PayPal's; refusing to fetch",
      ],
    ];
    for (const [name, request, reason, message] of cases) {
      it(name, async () => {
        const before = await stored();
        const fetchesBefore = fetchedUrls.length;
        const [b, headers] = request();
        const res = await post(b, headers);
        expect(res.status).toBe(401);
        expect(await errorOf(res)).toMatchObject({ code: reason, message: expect.stringContaining(message) });
        expect(await stored()).toBe(before);
        if (reason === "certificate_rejected") expect(fetchedUrls.length).toBe(fetchesBefore);
      });
    }
  });

  it("answers 503 (PayPal retries) when the certificate cannot be fetched, storing nothing", async () => {
    const before = await stored();
    const b = JSON.stringify(aPaypalCapture());
    const res = await post(
      b,
      paypalHeaders(
        b,
        { ...signer, certUrl: "https://api.sandbox.paypal.com/v1/notifications/certs/CERT-UNREACHABLE" },
        { webhookId },
      ),
    );
    expect(res.status).toBe(503);
    expect(await errorOf(res)).toMatchObject({
      code: "certificate_unavailable",
      message: expect.stringContaining("ENOTFOUND"),
    });
    expect(await stored()).toBe(before);
  });
});
