// Structured logs: one JSON object per line (pino), as {"level","at","pid",…fields,"event"},
// carrying trace_id and span_id when a span is active (lib/platform/tracing.ts), so a log
// line and the trace it belongs to can be found from each other. bigint fields are
// written as strings: raw event ids (19 digits) do not survive a JSON number.
import pino from "pino";
import { activeTraceIds } from "@/lib/platform/tracing";

export type Log = (event: string, fields?: Record<string, unknown>) => void;

/** The process's logger writes to stdout; a test passes its own stream. */
export function createLogger(destination?: pino.DestinationStream): pino.Logger {
  const options: pino.LoggerOptions = {
    base: { pid: process.pid },
    messageKey: "event",
    timestamp: () => `,"at":"${new Date().toISOString()}"`,
    formatters: { level: (label) => ({ level: label }) },
    mixin: () => activeTraceIds(),
  };
  return destination ? pino(options, destination) : pino(options);
}

export const logger = createLogger();

function withoutBigints(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields))
    out[k] =
      typeof v === "bigint"
        ? v.toString()
        : Array.isArray(v)
          ? v.map((x) => (typeof x === "bigint" ? x.toString() : x))
          : v;
  return out;
}

/** A Log writing through `to`: at info level, at error level when the event's name ends in error/failed/unavailable. */
export function logTo(to: pino.Logger): Log {
  return (event, fields = {}) => {
    const f = withoutBigints(fields);
    if (/\.(error|failed|unavailable)$/.test(event)) to.error(f, event);
    else to.info(f, event);
  };
}

export const jsonLog: Log = logTo(logger);
