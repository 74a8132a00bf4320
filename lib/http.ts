// One place that turns domain outcomes and unexpected failures into HTTP:
// a clear status and message, never a stack trace.
import { isDatabaseUnavailable } from "@/lib/db";

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
export function handled<A extends unknown[]>(handler: (...args: A) => Promise<Response>): (...args: A) => Promise<Response> {
  return async (...args: A) => {
    try {
      return await handler(...args);
    } catch (error) {
      if (isDatabaseUnavailable(error)) return jsonError(503, "database_unavailable", "Database unavailable, retry later");
      console.error("[tally] unhandled error", error);
      return jsonError(500, "internal_error", "Internal error; it has been logged");
    }
  };
}
