// Why a single sign-on was refused: one closed set of reasons, each with its HTTP status
// and a sentence for the person in front of the browser. The callback is a browser
// navigation, so the refusal is a small page, never a 500 or a stack trace.

export type OidcRefusalReason =
  // Single sign-on is not configured here.
  | "sso_off"
  // The browser brought no sign-in we started, or it expired or was used already.
  | "no_sign_in_under_way"
  // The provider answered with an error (the person cancelled, or it refused them).
  | "provider_refused"
  // The answer does not belong to the sign-in this browser started.
  | "state_mismatch"
  | "nonce_mismatch"
  // The ID token was not issued by our provider, or not for us.
  | "issuer_mismatch"
  | "audience_mismatch"
  // The provider would not exchange the code (used, expired, issued to another client), or its token does not check out.
  | "token_refused"
  | "invalid_token"
  // The provider cannot be reached, or its discovery document does not describe it.
  | "provider_unavailable"
  | "provider_misconfigured"
  // The person: claims Tally cannot act on.
  | "missing_email"
  | "no_mapped_role"
  | "conflicting_roles"
  | "unknown_mapped_tenant"
  | "email_taken"
  | "user_disabled"
  // The groups would demote Tally's last active admin.
  | "last_admin";

export const OIDC_REFUSAL_STATUS: Record<OidcRefusalReason, number> = {
  sso_off: 404,
  no_sign_in_under_way: 400,
  provider_refused: 403,
  state_mismatch: 400,
  nonce_mismatch: 400,
  issuer_mismatch: 400,
  audience_mismatch: 400,
  token_refused: 400,
  invalid_token: 400,
  provider_unavailable: 502,
  provider_misconfigured: 502,
  missing_email: 403,
  no_mapped_role: 403,
  conflicting_roles: 403,
  unknown_mapped_tenant: 403,
  email_taken: 409,
  user_disabled: 403,
  last_admin: 409,
};

export type OidcRefusal = { ok: false; reason: OidcRefusalReason; message: string };

const htmlText = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The refusal as a page; `code` is in the page (and a header) so support and tests can tell them apart. */
export function refusalPage(refusal: Pick<OidcRefusal, "reason" | "message">, headers?: HeadersInit): Response {
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in refused · Tally</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main class="login"><h1>Sign-in refused</h1>
<p role="alert" data-reason="${refusal.reason}">${htmlText(refusal.message)}</p>
<p><small>Code: <code>${refusal.reason}</code></small></p>
<p><a href="/login">Back to sign-in</a></p></main></body></html>`;
  const res = new Response(body, {
    status: OIDC_REFUSAL_STATUS[refusal.reason],
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...headers },
  });
  res.headers.set("x-tally-refusal", refusal.reason);
  return res;
}
