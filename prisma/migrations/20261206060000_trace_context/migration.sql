-- Tracing (issue #21.5): the trace context a raw event was acknowledged in, and the
-- one its receipt continues, so the worker's and the dispatcher's spans join the
-- acknowledgement's trace. W3C traceparent, version 00; NULL when tracing was off.
ALTER TABLE "raw_events" ADD COLUMN "trace_parent" TEXT;
ALTER TABLE "outbox" ADD COLUMN "trace_parent" TEXT;

-- Only ever written by Tally from its own spans, never from a request header; the
-- shape is held here too, so nothing else can land in a header we send.
ALTER TABLE "raw_events" ADD CONSTRAINT "raw_events_trace_parent_shape" CHECK ("trace_parent" ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
ALTER TABLE "outbox" ADD CONSTRAINT "outbox_trace_parent_shape" CHECK ("trace_parent" ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
