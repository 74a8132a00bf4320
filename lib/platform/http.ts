// One place that turns domain outcomes and unexpected failures into HTTP:
// a clear status and message, never a stack trace.
import { logger } from "@/lib/platform/log";
import type { z } from "zod";
import { isDatabaseUnavailable } from "@/lib/platform/db";
import type { Reason, Refusal } from "@/lib/platform/refusal";

export function jsonError(status: number, code: string, message: string, headers?: HeadersInit): Response {
  return Response.json({ error: { code, message } }, { status, headers });
}

/** Serialises bigint ids and amounts as strings: JSON numbers would lose precision. */
export function json(data: unknown, init?: ResponseInit): Response {
  const body = JSON.stringify(data, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
  return new Response(body, { ...init, headers: { "content-type": "application/json", ...init?.headers } });
}

export function methodNotAllowed(allowed: string[]): () => Response {
  return () => jsonError(405, "method_not_allowed", `Use ${allowed.join(" or ")}`, { allow: allowed.join(", ") });
}

/** Wraps a handler: database outages become 503, anything else a logged 500 with no internals. */
export function handled<A extends unknown[]>(
  handler: (...args: A) => Promise<Response>,
): (...args: A) => Promise<Response> {
  return async (...args: A) => {
    try {
      return await handler(...args);
    } catch (error) {
      if (isDatabaseUnavailable(error))
        return jsonError(503, "database_unavailable", "Database unavailable, retry later");
      // One JSON line through pino (the route runs in no active span, so it has no trace ids); the client gets none of it.
      logger.error(
        { error: error instanceof Error ? { message: error.message, stack: error.stack } : String(error) },
        "http.unhandled_error",
      );
      return jsonError(500, "internal_error", "Internal error; it has been logged");
    }
  };
}

/** A refusal from requireAccess. */
export function accessError(denied: { status: number; code: string; message: string }): Response {
  return jsonError(denied.status, denied.code, denied.message);
}

// Domain refusals by reason. Every reason has a status here: a reason added to
// the union without one does not compile.
const STATUS_BY_REASON: Record<Reason, number> = {
  not_found: 404,
  unknown_tenant: 404,
  unknown_provider: 404,
  unknown_endpoint: 404,
  invalid_slug: 400,
  invalid_name: 400,
  invalid_secret: 400,
  invalid_tolerance: 400,
  invalid_retention: 400,
  invalid_email: 400,
  invalid_url: 400,
  invalid_match_rules: 400,
  // A test notification the channel's receiver refused or never answered: the receiver is at fault, not Tally.
  delivery_failed: 502,
  invalid_role: 400,
  weak_password: 400,
  no_tenant: 400,
  last_admin: 400,
  reason_required: 400,
  reason_code_required: 400,
  invalid_resolution: 400,
  invalid_snooze: 400,
  // Well-formed but not acceptable as the case stands: not a member who works cases, records a link cannot join, sums that differ.
  invalid_assignee: 422,
  invalid_link: 422,
  link_unbalanced: 422,
  no_settlement_api: 400,
  no_window: 400,
  bad_window: 400,
  empty: 400,
  invalid_credentials: 401,
  rate_limited: 429,
  // Four-eyes: the proposer may not decide their own proposal.
  own_proposal: 403,
  exists: 409,
  already_revoked: 409,
  not_open: 409,
  not_pending: 409,
  already_decided: 409,
  stale_proposal: 409,
  // The case cannot be corrected as it stands (no posting of ours, or the ledger already agrees).
  no_posting: 409,
  nothing_to_correct: 409,
  nothing_to_do: 409,
  preview_changed: 409,
  too_many: 422,
  // Gone for good: only its hash is left.
  body_purged: 410,
  in_flight: 409,
  already_ran: 409,
  too_large: 413,
  malformed_report: 422,
  empty_report: 422,
  malformed_statement: 422,
  invalid_layout: 400,
  // The same file (by SHA-256) was imported before: its lines are there already.
  already_imported: 409,
};

/** A domain function's `{ ok: false, reason, message }` as HTTP. */
export function domainError(result: Pick<Refusal, "reason" | "message">, headers?: HeadersInit): Response {
  return jsonError(STATUS_BY_REASON[result.reason], result.reason, result.message, headers);
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; response: Response };

/** Validates input, answering 400 with a message that names the bad field (`field` when the input is one value). */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, field = "body"): Parsed<z.infer<S>> {
  const r = schema.safeParse(input);
  if (r.success) return { ok: true, value: r.data };
  const message = r.error.issues.map((i) => `${i.path.length ? i.path.join(".") : field}: ${i.message}`).join("; ");
  return { ok: false, response: jsonError(400, "invalid_input", message) };
}

export function queryOf(request: Request): Record<string, string> {
  return Object.fromEntries(new URL(request.url).searchParams);
}

/** The JSON body (an empty body is `{}`), or a 400 saying it is not JSON. */
export async function jsonBody(request: Request): Promise<Parsed<unknown>> {
  try {
    const text = await request.text();
    return { ok: true, value: text.trim() === "" ? {} : JSON.parse(text) };
  } catch {
    return { ok: false, response: jsonError(400, "invalid_json", "Request body must be JSON") };
  }
}

/** Data as the JSON API sends it (bigints and dates as strings), for server pages handing rows to client components. */
export function plain<T>(data: T): unknown {
  return JSON.parse(JSON.stringify(data, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
}
