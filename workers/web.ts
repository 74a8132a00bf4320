// The web process (what `npm start` runs instead of `next start`): Next.js's own
// request handler behind one line that records the connection's peer address.
// Next.js keeps a client-sent X-Forwarded-For as it is and drops the socket's
// address, so without this nothing after it could tell a proxy's word from a
// client's; lib/auth/client-address.ts trusts forwarded headers only when this
// peer is one of TALLY_TRUSTED_PROXIES.
import http from "node:http";
import next from "next";
import { type AckWatch, evaluateAckAlerts } from "@/lib/alerts/ack-rule";
import { PEER_HEADER } from "@/lib/auth/client-address";
import { ACK_PRESSURE_CHANNEL, startAckPressureSignal } from "@/lib/pipeline/ack-pressure";
import { config } from "@/lib/platform/config";
import { jsonLog } from "@/lib/platform/log";
import { nameConnections } from "@/lib/platform/db";
import { wake } from "@/lib/pipeline/wake";
import { startTracing } from "@/lib/platform/tracing";

// Before Next.js loads a route: the ack spans' provider (off without OTEL_EXPORTER_OTLP_ENDPOINT).
startTracing("tally-web");
nameConnections("tally-web");
const port = config().PORT;
const app = next({ dev: false, dir: process.cwd(), port });
const handle = app.getRequestHandler();
await app.prepare();

const server = http.createServer((req, res) => {
  // Always overwritten: a client cannot supply its own.
  req.headers[PEER_HEADER] = req.socket.remoteAddress ?? "";
  void handle(req, res);
});
// Node's 5 s closed idle connections under clients that reuse them: a Playwright
// API client's call after a 5 s pause was reset (ECONNRESET) in CI. See config.ts.
server.keepAliveTimeout = config().TALLY_HTTP_KEEP_ALIVE_MS;
server.listen(port, () => jsonLog("web.listening", { port }));

// Acknowledgements over budget: the workers back off until they are not (lib/pipeline/ack-pressure.ts).
// A NOTIFY per 250 ms tick at most, and only while over; a lost one costs the workers' pause, nothing else.
startAckPressureSignal({
  everyMs: 250,
  budgetMs: config().TALLY_ACK_SLO_MS,
  notify: () => wake(ACK_PRESSURE_CHANNEL),
});

// The ack-latency alert is judged here: the histogram it reads lives in this
// process (lib/alerts/ack-rule.ts). A failed pass is logged and tried next tick.
const watch: AckWatch = { overSince: null };
setInterval(() => {
  evaluateAckAlerts(watch).then(
    (passes) => {
      for (const p of passes)
        for (const [event, list] of [
          ["alert.opened", p.opened],
          ["alert.resolved", p.resolved],
        ] as const)
          for (const a of list) jsonLog(event, { tenant: p.tenant, rule: a.rule, subject: a.subject });
    },
    (error) => jsonLog("alerts.error", { error: String(error) }),
  );
}, config().TALLY_ALERT_INTERVAL_MS).unref();
