// A real HTTP receiver on loopback, for tests of what Tally sends out (receipts,
// alert webhooks, OTLP exports): each request is read whole and handed to the
// test's `record`; `answer` says what to send back (200 "ok" without it).
import http from "node:http";
import type { AddressInfo } from "node:net";

export type ReceivedRequest = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };
export type Answer = { status?: number; body?: string };
export type Receiver = { base: string; close(): Promise<void> };

export async function startReceiver(
  record: (request: ReceivedRequest) => void,
  answer: () => Answer = () => ({}),
): Promise<Receiver> {
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      record({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      const { status, body: text } = answer();
      res.statusCode = status ?? 200;
      res.end(text ?? "ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
