// A tenant's slug: it appears in webhook URLs, so it is checked before anything
// is looked up or cached for it (an unauthenticated request chooses it).
// At most 63 characters (1 + 61 + 1); the regex once allowed 64.
export const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Lower-case letters, digits and dashes, at most 63 characters, no dash at either end. */
export const isValidSlug = (slug: string): boolean => SLUG.test(slug);
