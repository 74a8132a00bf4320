// A path segment whose percent-encoding is not UTF-8 (`/api/webhooks/%C0%AE/stripe`,
// `%E2%82`, `%ZZ`) never reaches a route handler: Next.js 16.4 fails to decode
// it while matching the route and answers a bare text/plain 500 (seen with
// `next build && next start`: the handler is not called). proxy.ts runs this
// first for such paths and answers a 400 that says what is wrong.
import { jsonError } from "@/lib/platform/http";

/** The first segment of a raw (still encoded) path that does not decode, or null. */
export function undecodableSegment(rawPath: string): string | null {
  for (const segment of rawPath.split("/")) {
    if (!segment.includes("%")) continue;
    try {
      decodeURIComponent(segment);
    } catch {
      return segment;
    }
  }
  return null;
}

export function malformedPathResponse(rawPath: string): Response | null {
  const segment = undecodableSegment(rawPath);
  if (segment === null) return null;
  const shown = segment.length > 80 ? `${segment.slice(0, 80)}…` : segment;
  return jsonError(400, "malformed_path", `Path segment "${shown}" is not valid percent-encoded UTF-8`);
}
