// OpenTelemetry traces from the acknowledgement to the receipt (issue #21.5). Off
// unless OTEL_EXPORTER_OTLP_ENDPOINT is set (or a test gives an exporter): then
// there is no provider, the tracer is OpenTelemetry's no-op one, and the ack path
// pays a null check. One webhook is one trace:
//   webhook.ack (web) → event.pickup (worker) → event.commit → receipt.deliver
// linked through the trace context stored with the raw event (raw_events.trace_parent)
// and with its receipt (outbox.trace_parent). A pick-up's batch transaction is a
// trace of its own (batch.commit), linked to each member's event.commit and back.
// A provider's own traceparent header is untrusted input: at most an attribute of
// the ack span, never its parent (a sender must not be able to graft our spans
// onto its trace, or name our trace ids).
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Tracer,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";

export { SpanKind, SpanStatusCode };
export type { Span };

// One provider per process, whichever bundle (Next's route modules, the worker) asks.
const STATE = Symbol.for("tally.tracing");
type State = { provider: TracerProvider; contextManager: AsyncLocalStorageContextManager; tracer: Tracer };
const globals = globalThis as unknown as { [STATE]?: State };

/**
 * Starts tracing in this process when OTEL_EXPORTER_OTLP_ENDPOINT is set (spans
 * batched to `<endpoint>/v1/traces` as OTLP/HTTP JSON), or with the exporter given
 * (tests: each span exported as it ends). Returns whether tracing is on.
 */
export function startTracing(serviceName: string, exporter?: SpanExporter): boolean {
  if (globals[STATE]) return true;
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!exporter && !endpoint) return false;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME ?? serviceName }),
    spanProcessors: [
      exporter ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter: new OTLPTraceExporter() }),
    ],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  // Not registered as the global provider: Next.js instruments itself through the global
  // one (BaseServer.handleRequest and its route spans, a root of their own per request),
  // which would more than double the spans the acknowledgement makes and exports, for
  // nothing webhook.ack does not say.
  globals[STATE] = { provider, contextManager, tracer: provider.getTracer("tally") };
  return true;
}

/** Exports what is pending and turns tracing off (tests; a worker's shutdown). */
export async function stopTracing(): Promise<void> {
  const state = globals[STATE];
  if (!state) return;
  delete globals[STATE];
  await state.provider.forceFlush();
  await state.provider.shutdown();
  context.disable();
}

export async function flushTracing(): Promise<void> {
  await globals[STATE]?.provider.forceFlush();
}

export const tracingOn = (): boolean => globals[STATE] !== undefined;

/** Tally's tracer; OpenTelemetry's no-op one when tracing is off. */
export const tracer = (): Tracer => globals[STATE]?.tracer ?? trace.getTracer("tally");

// W3C Trace Context, version 00. All-zero ids are invalid by the spec.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A traceparent value as a span context, or null when it is not one. */
export function parseTraceparent(value: string | null | undefined): SpanContext | null {
  const m = value ? TRACEPARENT.exec(value) : null;
  if (!m) return null;
  const spanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16), isRemote: true };
  return isSpanContextValid(spanContext) ? spanContext : null;
}

/** The span's context as a traceparent value; null for a span that records nothing (tracing off). */
export function traceparentOf(span: Span | null | undefined): string | null {
  const c = span?.spanContext();
  if (!c || !isSpanContextValid(c)) return null;
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & TraceFlags.SAMPLED ? 1 : 0).toString(16).padStart(2, "0")}`;
}

/** The context to start a child of a stored traceparent in; the root when there is none. */
export function contextOf(traceparent: string | null | undefined): Context {
  const parent = parseTraceparent(traceparent);
  return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

/** A span that continues a stored trace, or null when tracing is off or nothing was stored. */
export function spanIn(
  traceparent: string | null | undefined,
  name: string,
  o: { kind?: SpanKind; attributes?: Attributes; startTime?: number; links?: Link[] } = {},
): Span | null {
  if (!tracingOn() || !parseTraceparent(traceparent)) return null;
  return tracer().startSpan(name, o, contextOf(traceparent));
}

/** Runs fn with the span active (log lines inside carry its ids); no span, no change. */
export function activeIn<T>(span: Span | null, fn: () => T): T {
  return span ? context.with(trace.setSpan(context.active(), span), fn) : fn();
}

/** trace_id and span_id of the active span, for log lines; {} without one. */
export function activeTraceIds(): { trace_id?: string; span_id?: string } {
  const c = trace.getSpan(context.active())?.spanContext();
  return c && isSpanContextValid(c) ? { trace_id: c.traceId, span_id: c.spanId } : {};
}

/** trace_id and span_id of a stored traceparent, for log lines about that event. */
export function traceIdsOf(traceparent: string | null | undefined): { trace_id?: string; span_id?: string } {
  const c = parseTraceparent(traceparent);
  return c ? { trace_id: c.traceId, span_id: c.spanId } : {};
}

/** Ends a span as failed with the message given, or as ok. */
export function endSpan(span: Span | null, error?: string): void {
  if (!span) return;
  if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.slice(0, 500) });
  span.end();
}
