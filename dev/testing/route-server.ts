// Real HTTP in front of the real webhook route handler (or any handler given), for
// tests that need a URL (the provider simulator posts to it, a load test measures
// acknowledgements through it) without building the Next.js app.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { deliver } from "@/dev/testing/route";

/**
 * `handle`: the route to serve (the webhook route by default). `health`: also answer
 * GET /api/health as the app does, for callers that wait on it (the live demo).
 */
export async function startRouteServer(
  handle: (request: Request) => Promise<Response> = deliver,
  { health = false } = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    if (health && req.url === "/api/health")
      return res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    const request = new Request(`http://tally.test${req.url}`, {
      method: req.method,
      headers,
      body: req.method === "POST" ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
      duplex: "half",
    } as RequestInit);
    const response = await handle(request);
    res.writeHead(response.status, Object.fromEntries(response.headers)).end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
