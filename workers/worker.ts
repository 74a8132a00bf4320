// `npm run worker`: the sidecar that turns stored deliveries into ledger postings.
// SIGTERM: stop taking work, let the current transaction finish, exit.
// SIGKILL at any point loses nothing: the sweep releases whatever was held.
import http from "node:http";
import { config } from "@/lib/platform/config";
import { lowerBackendPriority, lowerOwnPriority } from "@/lib/pipeline/ack-pressure";
import { closeDb, nameConnections, pool } from "@/lib/platform/db";
import { metrics } from "@/lib/platform/metrics";
import { jsonLog, runWorker } from "@/lib/pipeline/worker";
import { startTracing, stopTracing } from "@/lib/platform/tracing";

if (startTracing("tally-worker")) jsonLog("tracing.on", { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT });

nameConnections("tally-worker");
// Below the web process, so the acknowledgements get the CPU first (lib/pipeline/ack-pressure.ts).
const nice = config().TALLY_WORKER_NICE;
if (nice > 0) {
  jsonLog("worker.priority", { nice, threads: lowerOwnPriority(nice) });
  lowerBackendPriority(pool(), nice, jsonLog);
}

const controller = new AbortController();
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (controller.signal.aborted) return;
    jsonLog("worker.stopping", { signal });
    controller.abort();
    setTimeout(() => process.exit(1), 15_000).unref();
  });
}

const port = config().TALLY_WORKER_METRICS_PORT;
const server = port
  ? http
      .createServer(async (req, res) => {
        if (req.url !== "/metrics") return res.writeHead(404).end();
        const { registry } = metrics();
        res.writeHead(200, { "content-type": registry.contentType }).end(await registry.metrics());
      })
      .on("error", (error) => jsonLog("metrics.unavailable", { port, error: String(error) }))
      .listen(port, "127.0.0.1", () => jsonLog("metrics.listening", { url: `http://127.0.0.1:${port}/metrics` }))
  : null;

runWorker({ signal: controller.signal })
  .then(async () => {
    server?.close();
    await stopTracing(); // the spans still batched go out before the exit
    await closeDb();
    process.exit(0);
  })
  .catch(async (error) => {
    jsonLog("worker.crash", { error: String(error) });
    await closeDb();
    process.exit(1);
  });
