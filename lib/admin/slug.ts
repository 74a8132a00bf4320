// A tenant's slug is part of every webhook and dashboard URL. Anything that is
// not one is refused before it reaches a lookup: a NUL byte or a 10 kB segment
// from a path (an unauthenticated request chooses it) must cost a regex test,
// not a database query or a cache entry.
// At most 63 characters (1 + 61 + 1), no dash at either end; the regex once allowed 64.
export const TENANT_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const TENANT_SLUG_MAX = 63;

export function isTenantSlug(value: string): boolean {
  return value.length <= TENANT_SLUG_MAX && TENANT_SLUG.test(value);
}

/** The slug as a message may quote it: JSON-escaped (control bytes visible) and cut short. */
export function quotedSlug(value: string): string {
  return JSON.stringify(value.length > TENANT_SLUG_MAX ? `${value.slice(0, TENANT_SLUG_MAX)}…` : value);
}
