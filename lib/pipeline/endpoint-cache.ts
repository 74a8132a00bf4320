// The tenant's endpoint and signing secrets, cached in memory so the
// acknowledgement path costs one database round trip: the insert.
// A secret added or revoked elsewhere takes effect within the TTL.
// Unauthenticated requests choose the slugs looked up here, so the cache is an
// LRU with a size cap (TALLY_ENDPOINT_CACHE_MAX) and a slug that no tenant could
// have is refused before any lookup: 3,000 POSTs to long unknown slugs once took
// the web heap from 75 to 365 MB, for good, through an unbounded Map.
import { LRUCache } from "lru-cache";
import { isTenantSlug } from "@/lib/admin/slug";
import { config } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { open, openSettings } from "@/lib/platform/secrets-at-rest";
import type { Provider } from "@/lib/generated/prisma/enums";

export type EndpointKeys = {
  tenantId: string;
  endpointId: string;
  provider: Provider;
  toleranceSeconds: number;
  settings: Record<string, unknown>;
  secrets: { secret: string; expiresAt: Date | null }[];
};

export type EndpointLookup = { found: true; endpoint: EndpointKeys } | { found: false; missing: "tenant" | "endpoint" };

type Entry = { expiresAt: number; value: Promise<EndpointLookup> };
let cache: LRUCache<string, Entry> | undefined;
const entries = () => (cache ??= new LRUCache<string, Entry>({ max: config().TALLY_ENDPOINT_CACHE_MAX }));

// Unknown tenants are remembered briefly too, so a flood of bad URLs cannot
// turn into a flood of queries, but a tenant created a moment ago soon works.
const NEGATIVE_TTL_MS = 2000;
const NO_TENANT: Promise<EndpointLookup> = Promise.resolve({ found: false, missing: "tenant" });

async function load(slug: string, provider: Provider): Promise<EndpointLookup> {
  const tenant = await prisma.tenant.findUnique({
    where: { slug },
    select: {
      id: true,
      endpoints: {
        where: { provider, enabled: true },
        select: {
          id: true,
          toleranceSeconds: true,
          settings: true,
          secrets: {
            where: { revokedAt: null },
            select: { secret: true, expiresAt: true },
            orderBy: { createdAt: "desc" },
          },
        },
      },
    },
  });
  if (!tenant) return { found: false, missing: "tenant" };
  const endpoint = tenant.endpoints[0];
  if (!endpoint) return { found: false, missing: "endpoint" };
  return {
    found: true,
    endpoint: {
      tenantId: tenant.id,
      endpointId: endpoint.id,
      provider,
      toleranceSeconds: endpoint.toleranceSeconds,
      // Opened once, as the cache is filled: requests use the plain values from memory.
      settings: openSettings((endpoint.settings ?? {}) as Record<string, unknown>),
      secrets: endpoint.secrets.map((s) => ({ secret: open(s.secret), expiresAt: s.expiresAt })),
    },
  };
}

/** Concurrent misses for one key share a single query. Failures are not cached; impossible slugs are neither looked up nor cached. */
export function lookupEndpoint(slug: string, provider: Provider, now = Date.now()): Promise<EndpointLookup> {
  if (!isTenantSlug(slug)) return NO_TENANT;
  const cache = entries();
  const key = `${slug}\u0000${provider}`;
  const hit = cache.get(key);
  if (hit && hit.expiresAt > now) return hit.value;
  const value = load(slug, provider);
  const entry: Entry = { expiresAt: now + config().TALLY_SECRET_CACHE_TTL_MS, value };
  cache.set(key, entry);
  value.then(
    (result) => {
      if (!result.found) entry.expiresAt = Math.min(entry.expiresAt, now + NEGATIVE_TTL_MS);
    },
    () => {
      if (cache.get(key) === entry) cache.delete(key);
    },
  );
  return value;
}

/** Secrets usable right now: not revoked (filtered at load) and not past their overlap window. */
export function activeSecrets(endpoint: EndpointKeys, now = new Date()): string[] {
  return endpoint.secrets.filter((s) => !s.expiresAt || s.expiresAt > now).map((s) => s.secret);
}

/** How many tenant/provider pairs are cached (tests assert the cap holds). */
export function cachedEndpointCount(): number {
  return cache?.size ?? 0;
}

/** Forget cached entries, after a change made in this process (or in tests); with no slug, also re-reads the cap. */
export function forgetEndpoints(slug?: string): void {
  if (!slug) {
    cache = undefined;
    return;
  }
  if (!cache) return;
  for (const key of [...cache.keys()]) if (key.startsWith(`${slug}\u0000`)) cache.delete(key);
}
