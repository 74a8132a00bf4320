// The web process's connections: an idle keep-alive connection outlives Node's
// default 5 s, so a client or a balancer that reuses it after a pause is not
// reset. CI once failed on exactly that: a Playwright API call after a 5 s pause
// got ECONNRESET from a socket the server was closing at that moment.
import http from "node:http";
import type { Socket } from "node:net";
import { expect, test } from "@playwright/test";
import { baseURL } from "./support";

function get(agent: http.Agent, path: string) {
  return new Promise<{ status: number; keepAlive: string | undefined; socket: Socket; reused: boolean }>(
    (resolve, reject) => {
      const req = http.get(`${baseURL()}${path}`, { agent }, (res) => {
        res.resume();
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            keepAlive: res.headers["keep-alive"] as string | undefined,
            socket: req.socket as Socket,
            reused: req.reusedSocket,
          }),
        );
      });
      req.on("error", reject);
    },
  );
}

test("an idle keep-alive connection is kept past Node's 5 s default and reused, not reset", async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const first = await get(agent, "/api/health");
    expect(first.status).toBe(200);
    // What the server tells clients that read the hint (undici closes before it).
    expect(first.keepAlive).toBe("timeout=65");

    // Idle for longer than Node's default: the server must not close the connection.
    const closed = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 6_500);
      first.socket.once("close", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    expect(closed, "the server closed an idle keep-alive connection within 6.5 s").toBe(false);

    const second = await get(agent, "/api/health");
    expect(second.status).toBe(200);
    expect(second.reused).toBe(true);
    expect(second.socket).toBe(first.socket);
  } finally {
    agent.destroy();
  }
});
