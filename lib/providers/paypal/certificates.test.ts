import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CertificateCache, paypalCertificateUrl } from "@/lib/providers/paypal/certificates";
import { aCertificateChain, aPaypalSigner } from "@/dev/testing/provider-builders";

const signer = aPaypalSigner();
// The self-signed test certificate is its own trust anchor in the cache tests below.
const selfAnchored = () => [new X509Certificate(signer.certificatePem)];
const url = (path = "CERT-1") => new URL(`https://api.sandbox.paypal.com/v1/notifications/certs/${path}`);

describe("PayPal certificate URLs", () => {
  it("accepts https URLs on PayPal's API hosts and other paypal.com hosts", () => {
    for (const host of [
      "api.paypal.com",
      "api.sandbox.paypal.com",
      "api-m.paypal.com",
      "api-m.sandbox.paypal.com",
      "messageverificationcerts.paypal.com",
    ]) {
      expect(paypalCertificateUrl(`https://${host}/v1/notifications/certs/CERT-360caa42`)).toMatchObject({ ok: true });
    }
  });

  it("refuses everything else before any network call", () => {
    const refused = [
      "http://api.paypal.com/v1/notifications/certs/CERT",
      "https://evil.example/cert.pem",
      "https://paypal.com.evil.example/cert.pem",
      "https://evilpaypal.com/cert.pem",
      "https://paypal.com/cert.pem",
      "https://api.paypal.com.:443/cert.pem",
      "https://api.paypal.com:8443/cert.pem",
      "https://user:pw@api.paypal.com/cert.pem",
      "https://api.paypal.com@evil.example/cert.pem",
      "file:///etc/passwd",
      "not a url",
    ];
    for (const text of refused) expect([text, paypalCertificateUrl(text).ok]).toEqual([text, false]);
  });
});

describe("certificate URL prefixes trusted for simulators (TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES)", () => {
  const prefixes = ["http://127.0.0.1:4011/", "https://sim.test/paypal/certs/"];

  it("admits a URL with a prefix's scheme, host and port and a path below it", () => {
    expect(paypalCertificateUrl("http://127.0.0.1:4011/v1/notifications/certs/CERT-sim-1", prefixes)).toMatchObject({
      ok: true,
    });
    expect(paypalCertificateUrl("https://sim.test/paypal/certs/CERT-2", prefixes)).toMatchObject({ ok: true });
  });

  it("refuses what only looks like it, and admits nothing without prefixes", () => {
    const refused = [
      "http://127.0.0.1:4012/CERT",
      "https://127.0.0.1:4011/CERT",
      "http://localhost:4011/CERT",
      "http://127.0.0.1:4011@evil.example/CERT",
      "http://user:pw@127.0.0.1:4011/CERT",
      "https://sim.test/paypal/other/CERT",
      "https://sim.test/paypal/certs/../../other/CERT",
      "https://sim.test.evil.example/paypal/certs/CERT",
    ];
    for (const text of refused) expect([text, paypalCertificateUrl(text, prefixes).ok]).toEqual([text, false]);
    expect(paypalCertificateUrl("http://127.0.0.1:4011/v1/notifications/certs/CERT-sim-1").ok).toBe(false);
  });
});

describe("the certificate cache", () => {
  const counting = (pem = signer.certificatePem) => {
    const calls: string[] = [];
    return { calls, fetcher: async (u: URL) => (calls.push(u.href), pem) };
  };

  it("fetches a URL once, however many deliveries (even concurrent ones) ask", async () => {
    const { calls, fetcher } = counting();
    const cache = new CertificateCache({ fetcher, trustAnchors: selfAnchored });
    const results = await Promise.all([cache.get(url()), cache.get(url()), cache.get(url())]);
    expect(results.every((r) => r.ok)).toBe(true);
    expect((await cache.get(url())).ok).toBe(true);
    expect(calls).toHaveLength(1);
  });

  it("fetches again after the TTL", async () => {
    let now = Date.now();
    const { calls, fetcher } = counting();
    const cache = new CertificateCache({ fetcher, ttlMs: 60_000, clock: () => now, trustAnchors: selfAnchored });
    await cache.get(url());
    now += 59_999;
    await cache.get(url());
    expect(calls).toHaveLength(1);
    now += 2;
    await cache.get(url());
    expect(calls).toHaveLength(2);
  });

  it("keeps at most maxEntries URLs, dropping the oldest", async () => {
    const { calls, fetcher } = counting();
    const cache = new CertificateCache({ fetcher, maxEntries: 3, trustAnchors: selfAnchored });
    for (const path of ["A", "B", "C", "D"]) await cache.get(url(path));
    expect(cache.size).toBe(3);
    await cache.get(url("D"));
    expect(calls).toHaveLength(4);
    await cache.get(url("A"));
    expect(calls).toHaveLength(5);
  });

  it("does not keep failures: an unreachable certificate is tried again next time", async () => {
    let fail = true;
    const cache = new CertificateCache({
      fetcher: async () => (fail ? Promise.reject(new Error("ECONNRESET")) : signer.certificatePem),
      trustAnchors: selfAnchored,
    });
    expect(await cache.get(url())).toMatchObject({
      ok: false,
      reason: "certificate_unavailable",
      message: expect.stringContaining("ECONNRESET"),
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(cache.size).toBe(0);
    fail = false;
    expect(await cache.get(url())).toMatchObject({ ok: true });
  });

  it("rejects a response that is not a certificate", async () => {
    const cache = new CertificateCache({ fetcher: async () => "<html>PayPal</html>" });
    expect(await cache.get(url())).toMatchObject({
      ok: false,
      reason: "certificate_rejected",
      message: expect.stringContaining("did not return a PEM certificate"),
    });
  });
});

describe("who issued the certificate (issue #17 item 3)", () => {
  const chain = aCertificateChain();
  const anchors = () => [new X509Certificate(chain.rootPem)];
  const served = (pem: string, trustAnchors?: () => X509Certificate[]) =>
    new CertificateCache({ fetcher: async () => pem, ...(trustAnchors && { trustAnchors }) });

  it("accepts a leaf issued to PayPal's host that chains through the intermediate served with it to a trusted root", async () => {
    const r = await served(chain.servedPem, anchors).get(url());
    expect(r.ok && r.certificate.fingerprint256).toBe(new X509Certificate(chain.leafPem).fingerprint256);
  });

  it("refuses, naming why, a self-signed certificate and one from a CA the system does not trust", async () => {
    // Any https URL on a paypal.com host used to be enough: the host name is not the issuer.
    expect(await served(signer.certificatePem).get(url())).toMatchObject({
      ok: false,
      reason: "certificate_rejected",
      message: expect.stringContaining("does not chain to a trusted CA"),
    });
    expect(await served(chain.servedPem).get(url())).toMatchObject({
      ok: false,
      reason: "certificate_rejected",
      message: expect.stringContaining("issuer CN=Tally Test Root CA is neither a system CA"),
    });
  });

  it("refuses a chain without its intermediate, and a certificate issued to another name", async () => {
    expect(await served(chain.leafPem, anchors).get(url())).toMatchObject({
      ok: false,
      reason: "certificate_rejected",
      message: expect.stringContaining("does not chain"),
    });
    const other = aCertificateChain({ host: "api.evil.example" });
    expect(await served(other.servedPem, () => [new X509Certificate(other.rootPem)]).get(url())).toMatchObject({
      ok: false,
      reason: "certificate_rejected",
      message: expect.stringContaining("not to messageverificationcerts.paypal.com"),
    });
  });

  it("refuses a chain whose intermediate is past its validity", async () => {
    const cache = new CertificateCache({
      fetcher: async () => chain.servedPem,
      trustAnchors: anchors,
      clock: () => Date.now() + 10 * 24 * 3600 * 1000,
    });
    expect(await cache.get(url())).toMatchObject({
      ok: false,
      reason: "certificate_rejected",
      message: expect.stringContaining("outside its validity"),
    });
  });

  it("trusts a configured simulator's certificate as served, and only when the URL is one", async () => {
    expect(await served(signer.certificatePem).get(url(), { simulator: true })).toMatchObject({ ok: true });
  });
});

describe("cache misses a sender can force", () => {
  it("fetch at most maxFetchesPerMinute distinct URLs a minute; past that a miss is refused as unavailable (PayPal retries), hits still answer", async () => {
    let now = Date.now();
    const calls: string[] = [];
    const cache = new CertificateCache({
      fetcher: async (u) => (calls.push(u.href), signer.certificatePem),
      trustAnchors: selfAnchored,
      maxFetchesPerMinute: 5,
      maxEntries: 1000,
      clock: () => now,
    });
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => cache.get(url(`MADE-UP-${i}`))));
    expect(calls).toHaveLength(5);
    expect(answers.filter((a) => a.ok)).toHaveLength(5);
    expect(answers[5]).toMatchObject({
      ok: false,
      reason: "certificate_unavailable",
      message: expect.stringContaining("5 certificate URLs were fetched in the last minute"),
    });
    expect((await cache.get(url("MADE-UP-0"))).ok).toBe(true);
    expect(calls).toHaveLength(5);
    now += 60_001;
    expect((await cache.get(url("MADE-UP-5"))).ok).toBe(true);
    expect(calls).toHaveLength(6);
  });
});
