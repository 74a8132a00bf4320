// The acknowledgement path: verify the signature over the bytes received, store
// them untouched, say yes. No parsing, no ledger, no network: the acknowledgement
// promises only that we hold the event; the worker acts on it later.
import { isTenantSlug } from "@/lib/admin/slug";
import { config } from "@/lib/platform/config";
import { readBodyWithLimit } from "@/lib/pipeline/body-limit";
import { isDatabaseUnavailable, pool } from "@/lib/platform/db";
import { activeSecrets, lookupEndpoint } from "@/lib/pipeline/endpoint-cache";
import type { EventSource, Provider } from "@/lib/generated/prisma/enums";
import { metrics } from "@/lib/platform/metrics";
import { adapterFor } from "@/lib/providers";
import type { ProviderAdapter, VerifyFailure, VerifyHint } from "@/lib/providers/types";
import { RAW_EVENTS_CHANNEL, wake } from "@/lib/pipeline/wake";
import { recordAck } from "@/lib/pipeline/ack-pressure";
import { keepRefusal } from "@/lib/pipeline/refused";
import { ROOT_CONTEXT } from "@opentelemetry/api";
import {
  endSpan,
  parseTraceparent,
  type Span,
  SpanKind,
  traceparentOf,
  tracer,
  tracingOn,
} from "@/lib/platform/tracing";

export type RejectReason =
  | VerifyFailure
  /** PayPal: a stored transmission id with another body (its signature covers only a forgeable CRC-32). */
  | "transmission_reused"
  | "unknown_provider"
  | "unknown_endpoint"
  | "body_too_large"
  | "database_unavailable"
  /** raw_events has no partition for this month: the maintenance job has not run (see partitionedUntil). */
  | "no_partition";

export type IngestOutcome =
  | { ok: true; eventId: bigint; acknowledgement: { body: string; contentType: string } }
  | { ok: false; status: 401 | 404 | 413 | 503; reason: RejectReason; message: string };

export type Delivery = {
  tenant: string;
  provider: string;
  headers: Headers;
  body: ReadableStream<Uint8Array> | null;
  source?: EventSource;
};

const DEFAULT_ACK = { body: '{"received":true}', contentType: "application/json" };
const ALWAYS_KEPT = ["content-type", "user-agent"];

function keptHeaders(headers: Headers, adapter: ProviderAdapter): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of [...ALWAYS_KEPT, ...adapter.headerNames]) {
    const value = headers.get(name);
    if (value !== null) kept[name] = value;
  }
  return kept;
}

function reject(
  provider: string,
  status: 401 | 404 | 413 | 503,
  reason: RejectReason,
  message: string,
  hint?: VerifyHint,
): IngestOutcome {
  metrics().webhooksRejected.inc({ provider, reason, hint: hint ?? "none" });
  return { ok: false, status, reason, message: hint ? `${message} (hint: ${hint})` : message };
}

/**
 * The acknowledgement. With tracing on it is the root span of the event's trace
 * (webhook.ack), whose context is stored with the event for the worker to continue.
 */
export async function ingestWebhook(delivery: Delivery): Promise<IngestOutcome> {
  if (!tracingOn()) return ingest(delivery, null);
  // ROOT_CONTEXT: a sender's traceparent header is never our parent, only noted.
  const span = tracer().startSpan(
    "webhook.ack",
    {
      kind: SpanKind.SERVER,
      attributes: { "tally.tenant": delivery.tenant.slice(0, 64), "tally.provider": delivery.provider.slice(0, 32) },
    },
    ROOT_CONTEXT,
  );
  const theirs = delivery.headers.get("traceparent");
  if (theirs !== null)
    span.setAttribute("tally.sender_traceparent", parseTraceparent(theirs) ? theirs : "(not a W3C traceparent)");
  try {
    const outcome = await ingest(delivery, span);
    if (outcome.ok) span.setAttribute("tally.raw_event.id", outcome.eventId.toString());
    else span.setAttributes({ "tally.refused": outcome.reason, "http.response.status_code": outcome.status });
    // A refused delivery is the sender's error, not ours: only our 503s mark the span failed.
    endSpan(span, !outcome.ok && outcome.status >= 500 ? outcome.reason : undefined);
    return outcome;
  } catch (error) {
    endSpan(span, error instanceof Error ? error.message : String(error));
    throw error;
  }
}

async function ingest(delivery: Delivery, span: Span | null): Promise<IngestOutcome> {
  const started = performance.now();
  const adapter = adapterFor(delivery.provider);
  if (!adapter) return reject("unknown", 404, "unknown_provider", `Unknown provider "${delivery.provider}"`);
  const provider = adapter.provider;
  const limit = config().TALLY_MAX_BODY_BYTES;

  const declared = Number(delivery.headers.get("content-length") ?? NaN);
  if (declared > limit)
    return reject(provider, 413, "body_too_large", `Body of ${declared} bytes exceeds the ${limit}-byte limit`);

  // An unknown tenant, a tenant without this provider and a segment that cannot
  // be a slug all answer the same 404 (and count as one reason): a sender must
  // not be able to discover which tenant slugs exist by probing webhook URLs.
  const unknownEndpoint = () =>
    reject(
      provider,
      404,
      "unknown_endpoint",
      `No enabled ${provider} endpoint at this URL; check the webhook URL the provider was given`,
    );
  if (!isTenantSlug(delivery.tenant)) return unknownEndpoint();

  let lookup;
  try {
    lookup = await lookupEndpoint(delivery.tenant, provider);
  } catch (error) {
    if (isDatabaseUnavailable(error))
      return reject(provider, 503, "database_unavailable", "Database unavailable; nothing was stored, retry later");
    throw error;
  }
  if (!lookup.found) return unknownEndpoint();
  const endpoint = lookup.endpoint;

  const read = await readBodyWithLimit(delivery.body, limit);
  if (!read.ok) return reject(provider, 413, "body_too_large", `Body exceeds the ${limit}-byte limit`);
  const rawBody = read.body;

  const verdict = await adapter.verify({
    rawBody,
    headers: delivery.headers,
    secrets: activeSecrets(endpoint),
    toleranceSeconds: endpoint.toleranceSeconds,
    now: Math.floor(Date.now() / 1000),
    settings: endpoint.settings,
  });
  if (!verdict.ok) {
    // A certificate we could not fetch is our outage, not a bad delivery: 503 asks for a retry.
    if (verdict.reason !== "certificate_unavailable")
      await keepRefusal({
        tenantId: endpoint.tenantId,
        provider,
        reason: verdict.reason,
        hint: verdict.hint ?? null,
        body: rawBody,
        headers: keptHeaders(delivery.headers, adapter),
      });
    return reject(
      provider,
      verdict.reason === "certificate_unavailable" ? 503 : 401,
      verdict.reason,
      verdict.message,
      verdict.hint,
    );
  }

  let stored: Stored;
  try {
    stored = await storeRawEvent({
      tenantId: endpoint.tenantId,
      provider,
      source: delivery.source ?? "WEBHOOK",
      rawBody,
      headers: keptHeaders(delivery.headers, adapter),
      deliveryId: verdict.deliveryId,
      traceParent: traceparentOf(span),
    });
  } catch (error) {
    // Never acknowledge an event we do not durably hold: a 503 makes the provider retry.
    if (isDatabaseUnavailable(error))
      return reject(provider, 503, "database_unavailable", "Database unavailable; nothing was stored, retry later");
    if (isMissingPartition(error))
      return reject(
        provider,
        503,
        "no_partition",
        "No raw_events partition holds this month yet (the worker's maintenance job makes them ahead); nothing was stored, retry later",
      );
    throw error;
  }
  if (stored.kind === "reused") {
    await keepRefusal({
      tenantId: endpoint.tenantId,
      provider,
      reason: "transmission_reused",
      hint: null,
      body: rawBody,
      headers: keptHeaders(delivery.headers, adapter),
    });
    return reject(
      provider,
      401,
      "transmission_reused",
      `Transmission ${verdict.deliveryId} was already received with another body (event ${stored.eventId}); a signature admits one body, so this one was refused and nothing stored. ` +
        "PayPal signs only a CRC-32 of the body, which can be matched by a forged one",
    );
  }
  const eventId = stored.eventId;
  // A byte-identical resend of a stored transmission is the same delivery: answered as before, nothing new to do.
  if (stored.kind === "inserted") wake(RAW_EVENTS_CHANNEL);
  const m = metrics();
  m.webhooksReceived.inc({ provider });
  const ms = performance.now() - started;
  m.ackLatency.observe({ provider }, ms / 1000);
  recordAck(ms, config().TALLY_ACK_SLO_MS);
  return { ok: true, eventId, acknowledgement: adapter.acknowledgement ?? DEFAULT_ACK };
}

type NewRawEvent = {
  tenantId: string;
  provider: Provider;
  source: EventSource;
  rawBody: Buffer;
  headers: Record<string, string>;
  deliveryId: string | null;
  traceParent: string | null;
};

/**
 * The one database round trip of the acknowledgement. Plain pg with a named
 * prepared statement rather than Prisma: on this path Prisma's query building
 * cost more than the insert itself (bench:ack, 220 vs 327 req/s on 2 cores).
 */
type Stored = { kind: "inserted" | "resent"; eventId: bigint } | { kind: "reused"; eventId: bigint };

async function storeRawEvent(e: NewRawEvent): Promise<Stored> {
  // No row back means the trigger raw_events_stored skipped it: a PayPal
  // transmission id stored before. Only then is the earlier one looked at, by its
  // body's hash (the body itself may be gone after its retention).
  const result = await pool().query<{ id: string }>({
    name: "tally_ingest_raw_event",
    text: "INSERT INTO raw_events (tenant_id, provider, source, raw_body, headers, delivery_id, trace_parent) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    values: [e.tenantId, e.provider, e.source, e.rawBody, e.headers, e.deliveryId, e.traceParent],
  });
  if (result.rows[0]) return { kind: "inserted", eventId: BigInt(result.rows[0].id) };
  const earlier = await pool().query<{ id: string; same: boolean }>({
    name: "tally_ingest_earlier_transmission",
    text: "SELECT raw_event_id AS id, body_sha256 = sha256($3) AS same FROM raw_event_transmissions WHERE tenant_id = $1 AND delivery_id = $2",
    values: [e.tenantId, e.deliveryId, e.rawBody],
  });
  const row = earlier.rows[0];
  if (!row)
    throw new Error(`raw event insert for delivery ${e.deliveryId} was skipped, yet no stored transmission carries it`);
  return { kind: row.same === true ? "resent" : "reused", eventId: BigInt(row.id) };
}

/** An INSERT whose id no partition of raw_events covers (SQLSTATE 23514 with this message). */
function isMissingPartition(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === "23514" && /no partition of relation/.test(e.message ?? "");
}
