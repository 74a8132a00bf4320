// Where to go after sign-in (?next=): only a path on this origin. Browsers read
// "/\evil.test", "/\t/evil.test" and "//evil.test" as other hosts, so a prefix
// test on the raw string is not enough; the WHATWG URL parser (the browser's own
// rules) resolves the value against a placeholder origin, and anything that
// leaves it is refused. The result is the parser's serialisation, so what is
// followed is exactly what was checked. Pure: runs in the page and the server.
const PLACEHOLDER = "https://tally.invalid";

export function safeNextPath(next: unknown, fallback = "/"): string {
  if (typeof next !== "string" || !next.startsWith("/")) return fallback;
  let url: URL;
  try {
    url = new URL(next, PLACEHOLDER);
  } catch {
    return fallback;
  }
  if (url.origin !== PLACEHOLDER) return fallback;
  return `${url.pathname}${url.search}${url.hash}`;
}
