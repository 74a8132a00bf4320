// Where a request comes from: the browser origin that sent it (for CSRF). The
// client's address is lib/auth/client-address.ts.
import { timingSafeEqual } from "node:crypto";
import { config } from "@/lib/platform/config";

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function changesState(method: string): boolean {
  return STATE_CHANGING.has(method.toUpperCase());
}

function ownHosts(request: Request): string[] {
  const hosts = [request.headers.get("host"), request.headers.get("x-forwarded-host")];
  try {
    hosts.push(new URL(request.url).host);
  } catch {
    // A relative URL has no host of its own.
  }
  return hosts.filter((h): h is string => !!h).map((h) => h.toLowerCase());
}

/**
 * Refuses requests a browser sent on behalf of another site. Fetch Metadata
 * (Sec-Fetch-Site) answers directly when present; Origin, sent by browsers on
 * every POST/PUT/PATCH/DELETE, must then be this server or a trusted origin.
 * A request with neither did not come from a modern browser page.
 */
export function crossSiteProblem(request: Request): string | null {
  const site = request.headers.get("sec-fetch-site");
  if (site && site !== "same-origin") return `Cross-site request refused (Sec-Fetch-Site: ${site})`;
  const origin = request.headers.get("origin");
  if (!origin) return site ? null : "Missing Origin header; browsers send it, other clients should use an API token";
  const trusted = config()
    .TALLY_TRUSTED_ORIGINS.split(",")
    .map((o) => o.trim().toLowerCase())
    .filter(Boolean);
  if (trusted.includes(origin.toLowerCase())) return null;
  let host: string;
  try {
    host = new URL(origin).host.toLowerCase();
  } catch {
    return `Origin "${origin}" is not a URL`;
  }
  return ownHosts(request).includes(host) ? null : `Origin ${origin} is not this server`;
}

export const CSRF_HEADER = "x-csrf-token";

/**
 * Cookie-authenticated state changes need both checks: the origin (above) and
 * the session's own token in a header. A cross-site form cannot set a header,
 * and a cross-site fetch that sets one is stopped by CORS preflight.
 */
export function csrfProblem(request: Request, sessionToken: string): string | null {
  const crossSite = crossSiteProblem(request);
  if (crossSite) return crossSite;
  const sent = request.headers.get(CSRF_HEADER);
  if (!sent) return `Missing ${CSRF_HEADER} header`;
  const a = Buffer.from(sent);
  const b = Buffer.from(sessionToken);
  if (a.length !== b.length || !timingSafeEqual(a, b)) return `Wrong ${CSRF_HEADER} header; reload the page`;
  return null;
}
