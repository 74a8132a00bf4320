// PayPal's signing certificates: fetched only from a PayPal host over https, and
// kept in memory by URL so a burst of deliveries costs one fetch. The URL arrives
// in a header anyone can write, so it is checked before any network call, and
// redirects are refused (a PayPal URL must not lead elsewhere). A host name is not
// proof of issuer (issue #17 item 3): the certificate must chain, through the
// intermediates served with it, to a system CA (tls.rootCertificates) and name
// PayPal's message-verification host in its SAN or subject. Misses are budgeted:
// URLs a sender makes up cannot force more than a few fetches a minute.
import { X509Certificate } from "node:crypto";
import { rootCertificates } from "node:tls";

const PAYPAL_HOSTS = new Set([
  "api.paypal.com",
  "api.sandbox.paypal.com",
  "api-m.paypal.com",
  "api-m.sandbox.paypal.com",
]);
const FETCH_TIMEOUT_MS = 5000;
const MAX_PEM_BYTES = 64 * 1024;
/** The names PayPal's webhook signing certificates are issued to (live, sandbox). */
export const PAYPAL_CERT_HOSTS = [
  "messageverificationcerts.paypal.com",
  "messageverificationcerts.sandbox.paypal.com",
] as const;
const MAX_CHAIN = 5;
const FETCH_WINDOW_MS = 60_000;

let systemRoots: X509Certificate[] | null = null;
/** The CAs Node trusts for TLS (its bundled Mozilla store), parsed once. */
function systemTrustAnchors(): X509Certificate[] {
  systemRoots ??= rootCertificates.map((pem) => new X509Certificate(pem));
  return systemRoots;
}

const issuedBy = (child: X509Certificate, issuer: X509Certificate) =>
  child.checkIssued(issuer) && child.verify(issuer.publicKey);

/**
 * Null when `pem`'s first certificate is PayPal's: it chains through the certificates
 * after it to one of `anchors`, every link within its validity at `now`, and names a
 * PAYPAL_CERT_HOSTS host; else why not.
 */
export function chainProblem(pem: string, anchors: readonly X509Certificate[], now: Date): string | null {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const certs = blocks.map((b) => new X509Certificate(b));
  const leaf = certs[0];
  if (!leaf) return "no certificate in the response";
  if (!PAYPAL_CERT_HOSTS.some((host) => leaf.checkHost(host)))
    return `the certificate is issued to ${leaf.subject.replace(/\n/g, ", ")}, not to ${PAYPAL_CERT_HOSTS.join(" or ")}`;
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    if (Date.parse(current.validTo) < now.getTime() || Date.parse(current.validFrom) > now.getTime())
      return `${current.subject.replace(/\n/g, ", ")} in the chain is outside its validity (${current.validFrom} to ${current.validTo})`;
    if (anchors.some((anchor) => issuedBy(current, anchor))) return null;
    const next = certs.find((c) => c !== current && c.ca && issuedBy(current, c));
    if (!next)
      return `the certificate does not chain to a trusted CA (issuer ${current.issuer.replace(/\n/g, ", ")} is neither a system CA nor an intermediate served with it)`;
    current = next;
  }
  return `the certificate chain is longer than ${MAX_CHAIN}`;
}

/**
 * The certificate URL, if it names a PayPal host over https on the default port; else why not.
 * `extraPrefixes` (lib/config's TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES, for simulators and
 * tests only) admits URLs with a prefix's scheme, host and port, a path below its path,
 * and no credentials; it is empty unless configured.
 */
export function paypalCertificateUrl(
  text: string,
  extraPrefixes: readonly string[] = [],
): { ok: true; url: URL; simulator?: true } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, message: "PAYPAL-CERT-URL is not a URL" };
  }
  // A configured simulator's certificate is trusted as served: the prefix is the trust decision (refused in production).
  if (extraPrefixes.some((prefix) => underPrefix(url, prefix))) return { ok: true, url, simulator: true };
  if (url.protocol !== "https:") return { ok: false, message: `PAYPAL-CERT-URL must be https, got ${url.protocol}` };
  if (url.username || url.password || url.port)
    return { ok: false, message: "PAYPAL-CERT-URL must not carry credentials or a port" };
  if (!PAYPAL_HOSTS.has(url.hostname) && !url.hostname.endsWith(".paypal.com"))
    return {
      ok: false,
      message: `PAYPAL-CERT-URL host ${url.hostname} is not PayPal's; refusing to fetch a certificate from it`,
    };
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
type Options = {
  fetcher?: CertificateFetcher;
  ttlMs?: number;
  maxEntries?: number;
  clock?: () => number;
  /** CAs a PayPal certificate must chain to; the system's by default (tests pass their own). */
  trustAnchors?: () => readonly X509Certificate[];
  /** Distinct URLs fetched per minute at most; a miss past it is refused as unavailable (503: PayPal retries). */
  maxFetchesPerMinute?: number;
};

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
  private readonly trustAnchors: () => readonly X509Certificate[];
  private readonly maxFetchesPerMinute: number;
  private fetchedAt: number[] = [];

  constructor(options: Options = {}) {
    this.fetcher = options.fetcher ?? fetchCertificatePem;
    this.ttlMs = options.ttlMs ?? 24 * 3600 * 1000;
    this.maxEntries = options.maxEntries ?? 32;
    this.clock = options.clock ?? Date.now;
    this.trustAnchors = options.trustAnchors ?? systemTrustAnchors;
    // PayPal rotates its signing certificate rarely (a new URL a year, sandbox and live):
    // ten new URLs a minute is far beyond honest traffic and bounds what a sender can make us fetch.
    this.maxFetchesPerMinute = options.maxFetchesPerMinute ?? 10;
  }

  /** `simulator`: a configured simulator's URL, whose certificate is trusted as served (no chain check). */
  get(url: URL, o: { simulator?: boolean } = {}): Promise<CertificateLookup> {
    const key = url.href;
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now) return hit.value;
    if (hit) this.entries.delete(key);
    this.fetchedAt = this.fetchedAt.filter((t) => t > now - FETCH_WINDOW_MS);
    if (this.fetchedAt.length >= this.maxFetchesPerMinute) {
      return Promise.resolve({
        ok: false,
        reason: "certificate_unavailable",
        message: `Not fetching the PayPal certificate at ${url.href} now: ${this.maxFetchesPerMinute} certificate URLs were fetched in the last minute, more than PayPal ever uses; retry later`,
      });
    }
    this.fetchedAt.push(now);
    const entry: Entry = { expiresAt: now + this.ttlMs, value: this.load(url, o.simulator === true) };
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

  private async load(url: URL, simulator: boolean): Promise<CertificateLookup> {
    let pem: string;
    try {
      pem = await this.fetcher(url);
    } catch (error) {
      return {
        ok: false,
        reason: "certificate_unavailable",
        message: `Could not fetch the PayPal certificate at ${url.href}: ${(error as Error).message}`,
      };
    }
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(pem);
    } catch {
      return { ok: false, reason: "certificate_rejected", message: `${url.href} did not return a PEM certificate` };
    }
    if (simulator) return { ok: true, certificate };
    let problem: string | null;
    try {
      problem = chainProblem(pem, this.trustAnchors(), new Date(this.clock()));
    } catch (error) {
      problem = `a certificate in the chain is unreadable (${(error as Error).message})`;
    }
    return problem
      ? {
          ok: false,
          reason: "certificate_rejected",
          message: `The certificate at ${url.href} is not PayPal's: ${problem}`,
        }
      : { ok: true, certificate };
  }
}
