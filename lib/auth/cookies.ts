// The session cookie: its name, its attributes and when it is Secure.
// Only the cookie holds the session secret; the database holds its SHA-256.
import { config } from "@/lib/platform/config";

export const SESSION_COOKIE = "tally_session";

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;

/**
 * Secure unless configured otherwise, with one exception under "auto": a
 * plain-http request to a loopback host, where browsers would drop a Secure
 * cookie set over http and local use (npm start, the e2e tests) would break.
 * Nothing leaves the machine on loopback, so the cookie cannot be sniffed.
 */
export function cookieSecure(request: Request): boolean {
  const policy = config().TALLY_COOKIE_SECURE;
  if (policy !== "auto") return policy === "always";
  const host = request.headers.get("host") ?? new URL(request.url).host;
  const proto = request.headers.get("x-forwarded-proto") ?? new URL(request.url).protocol.replace(":", "");
  return !(proto === "http" && LOOPBACK.test(host));
}

function serialise(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${value}`,
    "Path=/",
    `Max-Age=${maxAgeSeconds}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

export function sessionCookie(request: Request, value: string, maxAgeSeconds: number): string {
  return serialise(value, maxAgeSeconds, cookieSecure(request));
}

export function clearedSessionCookie(request: Request): string {
  return serialise("", 0, cookieSecure(request));
}

/** The session cookie's value from a Cookie header, if any. */
export function readSessionCookie(cookieHeader: string | null): string | null {
  return readCookie(cookieHeader, SESSION_COOKIE);
}

/**
 * The single sign-on under way: a random handle to its row, for the callback only
 * (Path), gone after ten minutes. SameSite=Lax: the provider sends the browser back with
 * a top-level GET, which Lax cookies accompany and cross-site subrequests do not.
 */
export const OIDC_COOKIE = "tally_oidc";
const OIDC_COOKIE_PATH = "/api/auth/oidc";

export function oidcCookie(request: Request, value: string, maxAgeSeconds: number): string {
  return [
    `${OIDC_COOKIE}=${value}`,
    `Path=${OIDC_COOKIE_PATH}`,
    `Max-Age=${maxAgeSeconds}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(cookieSecure(request) ? ["Secure"] : []),
  ].join("; ");
}

export function clearedOidcCookie(request: Request): string {
  return oidcCookie(request, "", 0);
}

/** A cookie's value from a Cookie header, if any. */
export function readCookie(cookieHeader: string | null, name: string): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}
