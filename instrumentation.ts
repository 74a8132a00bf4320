// Next.js calls register() once per server process before it serves: tracing starts
// here for `next start` (npm start's web process starts it in workers/web.ts). Off
// unless OTEL_EXPORTER_OTLP_ENDPOINT is set (lib/platform/tracing.ts).
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs" || !process.env.OTEL_EXPORTER_OTLP_ENDPOINT) return;
  const { startTracing } = await import("@/lib/platform/tracing");
  startTracing("tally-web");
}
