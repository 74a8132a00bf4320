// The browser-side defences every page and API answer carries (set by proxy.ts).
//
// script-src: a fresh nonce per request plus 'strict-dynamic'. Next.js reads the
// nonce from the request's Content-Security-Policy header and puts it on its own
// bootstrap and inline hydration scripts; those load the rest. An injected
// <script> (or one replayed with an earlier page's nonce) does not run, and
// neither do inline event handlers or javascript: URLs. Nonces need every page
// rendered per request: the root layout opts out of static rendering.
//
// style-src keeps 'unsafe-inline': React's style={…} props and recharts' chart
// layout are style *attributes*, which a nonce cannot cover (only 'unsafe-inline'
// or listing a hash per value can). Injected CSS cannot run script, and with
// img-src, font-src and connect-src limited to this origin it cannot send what
// it reads anywhere else.
//
// frame-ancestors 'none' (and X-Frame-Options for older browsers): no other
// site can frame the dashboard to trick a click (four-eyes approvals, reprocess).
export type SecurityHeaderOptions = { nonce: string; secure: boolean; development: boolean };

export function contentSecurityPolicy({
  nonce,
  development,
}: Pick<SecurityHeaderOptions, "nonce" | "development">): string {
  return [
    "default-src 'self'",
    // next dev evaluates modules with eval() for fast refresh; production never does.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self'${development ? " ws:" : ""}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export function securityHeaders(options: SecurityHeaderOptions): Record<string, string> {
  return {
    "content-security-policy": contentSecurityPolicy(options),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    // Tenant slugs, event ids and case numbers are in our URLs; other sites get nothing.
    "referrer-policy": "same-origin",
    // Only where the session cookie is Secure, i.e. the site is reached over https:
    // announced over plain http (local use) it would be ignored or lock a developer out.
    ...(options.secure && { "strict-transport-security": "max-age=31536000" }),
  };
}

/** 128 random bits, base64: unguessable, and fresh for every request. */
export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
}
