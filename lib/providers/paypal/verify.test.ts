import { X509Certificate } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { CertificateCache } from "@/lib/providers/paypal/certificates";
import { paypalVerifier } from "@/lib/providers/paypal/verify";
import { aPaypalCapture, aPaypalSigner, paypalHeaders, type PaypalSigner } from "@/dev/testing/provider-builders";

// PayPal's docs describe the message (transmission id|time|webhook id|CRC-32) but, as
// far as we recall, publish no complete example (headers, body, certificate and
// signature that verify together); rather than invent one, each test signs with a
// fresh self-signed certificate (openssl) served through an injected fetcher, and
// the signer computes the CRC with zlib, independently of ours.
const webhookId = "1JE4291016473214C";
let signer: PaypalSigner;
let fetched: string[];
let verify: ReturnType<typeof paypalVerifier>;
beforeAll(() => {
  signer = aPaypalSigner();
  fetched = [];
  // The self-signed test certificate is the only trust anchor (lib/providers/paypal/certificates.test.ts tests real chains).
  verify = paypalVerifier(
    new CertificateCache({
      fetcher: async (u) => (
        fetched.push(u.href), u.href === signer.certUrl ? signer.certificatePem : Promise.reject(new Error("HTTP 404"))
      ),
      trustAnchors: () => [new X509Certificate(signer.certificatePem)],
    }),
  );
});

const body = JSON.stringify(aPaypalCapture({ id: "27M47624FP291604U" }));
const nowSeconds = () => Math.floor(Date.now() / 1000);
const check = (
  headers: Record<string, string>,
  o: { raw?: string; settings?: Record<string, unknown>; now?: number; tolerance?: number } = {},
) =>
  verify({
    rawBody: Buffer.from(o.raw ?? body),
    headers: new Headers(headers),
    secrets: [],
    toleranceSeconds: o.tolerance ?? 300,
    now: o.now ?? nowSeconds(),
    settings: o.settings ?? { webhookId },
  });

describe("PayPal signature verification", () => {
  it("accepts a delivery signed over id|time|webhookId|crc32(body) with the certificate's key", async () => {
    const headers = paypalHeaders(body, signer, { webhookId, transmissionId: "69cd13f0-d67a-11e5-baa3-778b53f4ae55" });
    expect(await check(headers)).toEqual({ ok: true, deliveryId: "69cd13f0-d67a-11e5-baa3-778b53f4ae55" });
  });

  it("fetches the certificate once for many deliveries", async () => {
    const before = fetched.length;
    for (let i = 0; i < 3; i++) expect((await check(paypalHeaders(body, signer, { webhookId }))).ok).toBe(true);
    expect(fetched.length - before).toBeLessThanOrEqual(1);
  });

  it("rejects a tampered body", async () => {
    const headers = paypalHeaders(body, signer, { webhookId });
    expect(await check(headers, { raw: body.replace('"30.00"', '"3000.00"') })).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
      hint: "wrong_secret",
    });
  });

  it("rejects a body re-serialised in transit, and says so", async () => {
    const headers = paypalHeaders(body, signer, { webhookId });
    expect(await check(headers, { raw: JSON.stringify(JSON.parse(body), null, 2) })).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
      hint: "body_reserialized",
    });
  });

  it("rejects a delivery for another webhook id, explaining where to find the right one", async () => {
    const headers = paypalHeaders(body, signer, { webhookId: "8PT597110X687430LKGECATA" });
    expect(await check(headers)).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
      hint: "wrong_secret",
      message: expect.stringContaining("in the sandbox app"),
    });
    expect(
      await check(paypalHeaders(body, signer, { webhookId }), { settings: { webhookId: ` ${webhookId}` } }),
    ).toMatchObject({ ok: false, hint: "secret_whitespace" });
  });

  it("rejects a signature made with another key than the certificate's", async () => {
    const impostor = aPaypalSigner({ certUrl: signer.certUrl });
    expect(await check(paypalHeaders(body, impostor, { webhookId }))).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
    });
  });

  it("names missing headers", async () => {
    const headers = paypalHeaders(body, signer, { webhookId });
    delete headers["paypal-transmission-sig"];
    delete headers["paypal-cert-url"];
    expect(await check(headers)).toEqual({
      ok: false,
      reason: "missing_header",
      message: "Missing PAYPAL-TRANSMISSION-SIG, PAYPAL-CERT-URL headers",
    });
    expect(await check({})).toMatchObject({ ok: false, reason: "missing_header" });
  });

  it("refuses an unsupported algorithm and malformed values", async () => {
    const h = paypalHeaders(body, signer, { webhookId });
    expect(await check({ ...h, "paypal-auth-algo": "SHA1withRSA" })).toMatchObject({
      ok: false,
      reason: "malformed_header",
    });
    expect(await check({ ...h, "paypal-transmission-time": "yesterday" })).toMatchObject({
      ok: false,
      reason: "malformed_header",
    });
    expect(await check({ ...h, "paypal-transmission-sig": "%%%" })).toMatchObject({
      ok: false,
      reason: "malformed_header",
    });
  });

  it("refuses a certificate URL off PayPal's hosts without fetching it", async () => {
    const before = fetched.length;
    for (const certUrl of [
      "https://evil.example/cert.pem",
      "http://api.paypal.com/v1/notifications/certs/X",
      "https://paypal.com.evil.example/c",
    ]) {
      const headers = { ...paypalHeaders(body, { ...signer, certUrl }, { webhookId }) };
      expect(await check(headers)).toMatchObject({ ok: false, reason: "certificate_rejected" });
    }
    expect(fetched.length).toBe(before);
  });

  it("reports an unreachable certificate as unavailable (an outage, not a forgery)", async () => {
    const headers = paypalHeaders(
      body,
      { ...signer, certUrl: "https://api.sandbox.paypal.com/v1/notifications/certs/GONE" },
      { webhookId },
    );
    expect(await check(headers)).toMatchObject({
      ok: false,
      reason: "certificate_unavailable",
      message: expect.stringContaining("HTTP 404"),
    });
  });

  it("refuses an expired certificate", async () => {
    const later = Math.floor(Date.parse(new X509Certificate(signer.certificatePem).validTo) / 1000) + 60;
    const headers = paypalHeaders(body, signer, { webhookId, time: new Date(later * 1000) });
    expect(await check(headers, { now: later })).toMatchObject({
      ok: false,
      reason: "certificate_rejected",
      message: expect.stringContaining("expired"),
    });
  });

  it("holds the signed transmission time to the tolerance, naming the skew", async () => {
    const headers = paypalHeaders(body, signer, { webhookId, time: new Date(Date.now() - 3600_000) });
    const r = await check(headers);
    expect(r).toMatchObject({ ok: false, reason: "timestamp_outside_tolerance", hint: "clock_skew" });
    expect(!r.ok && r.message).toMatch(/PAYPAL-TRANSMISSION-TIME is 360\d s old, outside the 300 s tolerance/);
  });

  it("refuses when the endpoint has no webhook id", async () => {
    expect(await check(paypalHeaders(body, signer, { webhookId }), { settings: {} })).toMatchObject({
      ok: false,
      reason: "no_active_secret",
      message: expect.stringContaining("settings.webhookId"),
    });
  });
});
