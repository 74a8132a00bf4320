// PayPal's signing certificates: fetched only from a PayPal host over https, and
// kept in memory by URL so a burst of deliveries costs one fetch. The URL arrives
// in a header anyone can write, so it is checked before any network call, and
// redirects are refused (a PayPal URL must not lead elsewhere).
import { X509Certificate } from "node:crypto";

const PAYPAL_HOSTS = new Set(["api.paypal.com", "api.sandbox.paypal.com", "api-m.paypal.com", "api-m.sandbox.paypal.com"]);
const FETCH_TIMEOUT_MS = 5000;
const MAX_PEM_BYTES = 64 * 1024;

/**
 * The certificate URL, if it names a PayPal host over https on the default port; else why not.
 * `extraPrefixes` (lib/config's TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES, for simulators and
 * tests only) admits URLs with a prefix's scheme, host and port, a path below its path,
 * and no credentials; it is empty unless configured.
 */
export function paypalCertificateUrl(text: string, extraPrefixes: readonly string[] = []): { ok: true; url: URL } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, message: "PAYPAL-CERT-URL is not a URL" };
  }
  if (extraPrefixes.some((prefix) => underPrefix(url, prefix))) return { ok: true, url };
  if (url.protocol !== "https:") return { ok: false, message: `PAYPAL-CERT-URL must be https, got ${url.protocol}` };
  if (url.username || url.password || url.port) return { ok: false, message: "PAYPAL-CERT-URL must not carry credentials or a port" };
  if (!PAYPAL_HOSTS.has(url.hostname) && !url.hostname.endsWith(".paypal.com")) return { ok: false, message: `PAYPAL-CERT-URL host ${url.hostname} is not PayPal's; refusing to fetch a certificate from it` };
  return { ok: true, url };
}

/** Compared parsed, never as text: "http://127.0.0.1:80@evil.example/" starts with "http://127.0.0.1:" but is evil.example. */
function underPrefix(url: URL, prefix: string): boolean {
  const base = new URL(prefix);
  return url.origin === base.origin && !url.username && !url.password && url.pathname.startsWith(base.pathname);
}

/** Fetches the PEM text at a (checked) URL. Injected in tests; throws on any failure. */
export type CertificateFetcher = (url: URL) => Promise<string>;

export const fetchCertificatePem: CertificateFetcher = async (url) => {
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: "error" });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (declared > MAX_PEM_BYTES) throw new Error(`certificate of ${declared} bytes is larger than ${MAX_PEM_BYTES}`);
  const text = await response.text();
  if (text.length > MAX_PEM_BYTES) throw new Error(`certificate is larger than ${MAX_PEM_BYTES} bytes`);
  return text;
};

export type CertificateLookup =
  | { ok: true; certificate: X509Certificate }
  | { ok: false; reason: "certificate_unavailable" | "certificate_rejected"; message: string };

type Entry = { expiresAt: number; value: Promise<CertificateLookup> };

/**
 * Certificates by URL. A hit within the TTL costs nothing; concurrent misses for
 * one URL share a fetch; failures are not kept; past `maxEntries` the oldest goes,
 * so URLs made up by a sender cannot grow memory without bound.
 */
export class CertificateCache {
  private readonly entries = new Map<string, Entry>();
  private readonly fetcher: CertificateFetcher;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly clock: () => number;

  constructor(options: { fetcher?: CertificateFetcher; ttlMs?: number; maxEntries?: number; clock?: () => number } = {}) {
    this.fetcher = options.fetcher ?? fetchCertificatePem;
    this.ttlMs = options.ttlMs ?? 24 * 3600 * 1000;
    this.maxEntries = options.maxEntries ?? 32;
    this.clock = options.clock ?? Date.now;
  }

  get(url: URL): Promise<CertificateLookup> {
    const key = url.href;
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now) return hit.value;
    if (hit) this.entries.delete(key);
    const entry: Entry = { expiresAt: now + this.ttlMs, value: this.load(url) };
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    void entry.value.then((result) => {
      if (!result.ok && this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry.value;
  }

  get size(): number {
    return this.entries.size;
  }

  private async load(url: URL): Promise<CertificateLookup> {
    let pem: string;
    try {
      pem = await this.fetcher(url);
    } catch (error) {
      return { ok: false, reason: "certificate_unavailable", message: `Could not fetch the PayPal certificate at ${url.href}: ${(error as Error).message}` };
    }
    try {
      return { ok: true, certificate: new X509Certificate(pem) };
    } catch {
      return { ok: false, reason: "certificate_rejected", message: `${url.href} did not return a PEM certificate` };
    }
  }
}
