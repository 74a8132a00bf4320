// Refusals a person, a token holder or a provider can cause: values, not
// exceptions. `Reason` is one closed union so that lib/platform/http.ts can map
// every reason to an HTTP status with a `Record<Reason, number>`: a new reason
// without a status is a compile error, not a silent 400.

export type Reason =
  // Something named does not exist, or the caller may not see it.
  | "not_found"
  | "unknown_tenant"
  | "unknown_provider"
  | "unknown_endpoint"
  // Input a person can correct.
  | "invalid_slug"
  | "invalid_name"
  | "invalid_secret"
  | "invalid_tolerance"
  | "invalid_retention"
  | "invalid_email"
  | "invalid_url"
  | "invalid_match_rules"
  | "delivery_failed"
  | "invalid_role"
  | "weak_password"
  | "no_tenant"
  | "last_admin"
  | "reason_required"
  | "reason_code_required"
  | "invalid_resolution"
  | "invalid_assignee"
  | "invalid_snooze"
  | "invalid_link"
  | "link_unbalanced"
  | "no_settlement_api"
  | "no_window"
  | "bad_window"
  | "empty"
  // Sign-in.
  | "invalid_credentials"
  | "rate_limited"
  // The state does not allow it (now, or any more).
  | "exists"
  | "already_revoked"
  | "own_proposal"
  | "not_open"
  | "not_pending"
  | "already_decided"
  | "stale_proposal"
  | "no_posting"
  | "nothing_to_correct"
  | "nothing_to_do"
  | "in_flight"
  | "already_ran"
  | "preview_changed"
  | "too_many"
  | "body_purged"
  // Settlement reports.
  | "too_large"
  | "malformed_report"
  | "empty_report"
  // Bank statements.
  | "malformed_statement"
  | "invalid_layout"
  | "already_imported";

export type Refusal<R extends Reason = Reason> = { ok: false; reason: R; message: string };

export type DomainResult<T> = { ok: true; value: T } | Refusal;

export function refuse<R extends Reason>(reason: R, message: string): Refusal<R> {
  return { ok: false, reason, message };
}
