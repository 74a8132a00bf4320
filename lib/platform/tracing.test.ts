// One webhook, one connected trace (issue #21.5): the acknowledgement through the
// route handler, the worker's pick-up and batch commit, and the receipt's delivery
// to a real HTTP receiver, whose request carries the trace on. Off by default;
// exported over OTLP/HTTP to a real collector when OTEL_EXPORTER_OTLP_ENDPOINT is set;
// a sender's traceparent never becomes our parent.
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { aStripePayment, aStripeRefund, stripeRequest } from "@/dev/testing/builders";
import { drain } from "@/dev/testing/drain";
import { type Receiver, type ReceivedRequest, startReceiver } from "@/dev/testing/receiver";
import { fileTenant } from "@/dev/testing/file-tenant";
import { deliver } from "@/dev/testing/route";
import { httpTransport } from "@/lib/pipeline/receipt-transport";
import { processOnce } from "@/lib/pipeline/worker";
import { prisma } from "@/lib/platform/db";
import { createLogger, logTo } from "@/lib/platform/log";
import { activeIn, flushTracing, startTracing, stopTracing, tracer, tracingOn } from "@/lib/platform/tracing";

const tenant = fileTenant();
// A provider (or anyone) sending its own trace context with the webhook.
const THEIRS = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

let receiver: Receiver;
let base: string;
const received: ReceivedRequest[] = [];

beforeAll(async () => {
  receiver = await startReceiver(
    (request) => received.push(request),
    () => ({ body: "{}" }),
  );
  base = receiver.base;
});
afterAll(async () => {
  await stopTracing();
  await receiver.close();
});

/** One signed payment through the route, the worker and the outbox to the receiver; its raw event and receipt. */
async function oneWebhook(headers: Record<string, string> = {}) {
  const payment = aStripePayment({ amount: 4200n });
  const request = stripeRequest(tenant, payment);
  for (const [k, v] of Object.entries(headers)) request.headers.set(k, v);
  expect((await deliver(request)).status).toBe(200);
  received.length = 0;
  await drain(httpTransport(`${base}/receipts`));
  const raw = await prisma.rawEvent.findFirstOrThrow({
    where: { tenantId: tenant.id, movementReferences: { has: payment.data.object.id } },
  });
  const receipt = received.find((r) => r.url === "/receipts" && r.body.includes(payment.data.object.id));
  expect(receipt).toBeDefined();
  return { raw, receipt: receipt!, reference: payment.data.object.id };
}

describe("tracing", () => {
  it("is off without OTEL_EXPORTER_OTLP_ENDPOINT: nothing stored, no header sent", async () => {
    expect(process.env.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(startTracing("tally-test")).toBe(false);
    expect(tracingOn()).toBe(false);
    const { raw, receipt } = await oneWebhook({ traceparent: THEIRS });
    expect(raw.traceParent).toBeNull();
    expect(receipt.headers.traceparent).toBeUndefined();
    expect(await prisma.outboxMessage.count({ where: { tenantId: tenant.id, traceParent: { not: null } } })).toBe(0);
  });

  it("makes one connected trace of a webhook, ack to receipt, whatever traceparent the sender sends", async () => {
    const exporter = new InMemorySpanExporter();
    expect(startTracing("tally-test", exporter)).toBe(true);
    const { raw, receipt, reference } = await oneWebhook({ traceparent: THEIRS });
    const spans = exporter.getFinishedSpans();
    const named = (name: string) => {
      const found = spans.filter(
        (s) =>
          s.name === name &&
          (s.attributes["tally.raw_event.id"] === raw.id.toString() ||
            s.attributes["tally.reference"] === reference ||
            name === "receipt.deliver" ||
            name === "batch.commit"),
      );
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };
    const ack = named("webhook.ack");
    const trace = ack.spanContext().traceId;
    const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

    // The ack is a root: the sender's context is an attribute, not our parent, and not our trace.
    expect(parentOf(ack)).toBeUndefined();
    expect(trace).not.toBe(THEIRS.split("-")[1]);
    expect(ack.attributes["tally.sender_traceparent"]).toBe(THEIRS);
    expect(raw.traceParent).toBe(`00-${trace}-${ack.spanContext().spanId}-01`);

    const pickup = named("event.pickup");
    const commit = named("event.commit");
    const delivery = named("receipt.deliver");
    const batch = named("batch.commit");
    for (const s of [pickup, commit, delivery]) expect(s.spanContext().traceId, s.name).toBe(trace);
    expect(parentOf(pickup)).toBe(ack.spanContext().spanId);
    expect(parentOf(commit)).toBe(pickup.spanContext().spanId);
    expect(parentOf(delivery)).toBe(commit.spanContext().spanId);
    // A payment is posted in its pick-up's transaction (commitInPickUp): the event is DONE there.
    expect(pickup.attributes["tally.outcome"]).toBe("DONE");
    expect(commit.attributes["tally.outcome"]).toBe("posted");

    // The batch's transaction is its own trace, linked both ways to the member's commit.
    expect(batch.spanContext().traceId).not.toBe(trace);
    expect(batch.links.map((l) => l.context.spanId)).toContain(commit.spanContext().spanId);
    expect(commit.links.map((l) => l.context.spanId)).toEqual([batch.spanContext().spanId]);

    // The receiver gets the delivery's context, so its own spans join the webhook's trace.
    expect(receipt.headers.traceparent).toBe(`00-${trace}-${delivery.spanContext().spanId}-01`);
    exporter.reset();
  });

  it("a traceparent that is not one is noted as such, and a duplicate delivery ends in its pick-up", async () => {
    const exporter = new InMemorySpanExporter();
    await stopTracing();
    startTracing("tally-test", exporter);
    const payment = aStripePayment({ amount: 77n });
    for (const traceparent of [`00-${"0".repeat(32)}-${"0".repeat(16)}-01`, "x".repeat(5000)]) {
      const request = stripeRequest(tenant, payment);
      request.headers.set("traceparent", traceparent);
      expect((await deliver(request)).status).toBe(200);
    }
    await drain();
    const acks = exporter.getFinishedSpans().filter((s) => s.name === "webhook.ack");
    expect(acks.map((s) => s.attributes["tally.sender_traceparent"])).toEqual([
      "(not a W3C traceparent)",
      "(not a W3C traceparent)",
    ]);
    const pickups = exporter.getFinishedSpans().filter((s) => s.name === "event.pickup");
    expect(pickups.map((s) => s.attributes["tally.outcome"]).sort()).toEqual(["DONE", "DUPLICATE"]);
    // Each pick-up continues its own delivery's trace.
    expect(new Set(pickups.map((s) => s.spanContext().traceId))).toEqual(
      new Set(acks.map((s) => s.spanContext().traceId)),
    );
  });

  it("writes JSON log lines through pino carrying the trace id: the active span's, and a claim's own", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const log = logTo(createLogger(sink));
    const exporter = new InMemorySpanExporter();
    await stopTracing();
    startTracing("tally-test", exporter);

    const span = tracer().startSpan("a.span");
    activeIn(span, () => log("inside", { id: 2n ** 62n }));
    log("outside.failed");
    span.end();
    expect(lines[0]).toMatchObject({
      event: "inside",
      level: "info",
      id: (2n ** 62n).toString(),
      trace_id: span.spanContext().traceId,
      span_id: span.spanContext().spanId,
    });
    expect(typeof lines[0]!.at).toBe("string");
    expect(lines[1]).toMatchObject({ event: "outside.failed", level: "error" });
    expect(lines[1]!.trace_id).toBeUndefined();

    // A refund whose payment never came is deferred: the worker's line about it names the
    // trace its webhook's acknowledgement began.
    await drain();
    const refund = aStripeRefund({ payment: `pi_never_${Date.now()}` });
    expect((await deliver(stripeRequest(tenant, refund))).status).toBe(200);
    lines.length = 0;
    await processOnce(log);
    const deferred = lines.find((l) => l.event === "claim.deferred" && l.reference === refund.data.object.id);
    expect(deferred, JSON.stringify(lines)).toBeDefined();
    const raw = await prisma.rawEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, movementReferences: { has: refund.data.object.id } },
    });
    const ack = exporter
      .getFinishedSpans()
      .find((s) => s.name === "webhook.ack" && s.attributes["tally.raw_event.id"] === raw.id.toString());
    expect(ack).toBeDefined();
    expect(deferred!.trace_id).toBe(ack!.spanContext().traceId);
    await stopTracing();
  });

  it("exports over OTLP/HTTP to a real collector when OTEL_EXPORTER_OTLP_ENDPOINT is set", async () => {
    await stopTracing();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `${base}/otlp`;
    try {
      expect(startTracing("tally-test-otlp")).toBe(true);
      const { raw } = await oneWebhook();
      await flushTracing();
      const posts = received.filter((r) => r.url === "/otlp/v1/traces");
      expect(posts.length).toBeGreaterThan(0);
      expect(posts[0]!.headers["content-type"]).toMatch(/json/);
      const spans = posts.flatMap(
        (p) =>
          (
            JSON.parse(p.body) as {
              resourceSpans: {
                resource: { attributes: { key: string; value: { stringValue?: string } }[] };
                scopeSpans: { spans: { name: string; traceId: string }[] }[];
              }[];
            }
          ).resourceSpans,
      );
      expect(spans[0]!.resource.attributes).toContainEqual({
        key: "service.name",
        value: { stringValue: "tally-test-otlp" },
      });
      const names = spans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((x) => x.name)));
      for (const name of ["webhook.ack", "event.pickup", "event.commit", "batch.commit", "receipt.deliver"])
        expect(names).toContain(name);
      // The stored context names a trace the collector received.
      const traceIds = spans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((x) => x.traceId)));
      expect(traceIds).toContain(raw.traceParent!.split("-")[1]);
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      await stopTracing();
    }
  });
});
