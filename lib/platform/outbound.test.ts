// Alert webhooks reach only public addresses unless the operator trusts a network:
// against a real receiver on this machine, which a URL an admin typed must not be
// able to make the worker reach, by address or by a name that resolves to it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { aTenant, type TestTenant } from "@/dev/testing/builders";
import { addChannel } from "@/lib/alerts/channels";
import { tryChannel } from "@/lib/alerts/try-channel";
import { config, resetConfigForTests } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { parseNetworks, refusedAddress } from "@/lib/platform/outbound";
import { seal } from "@/lib/platform/secrets-at-rest";

let receiver: http.Server;
let port: number;
const received: string[] = [];
let redirect = false;
let t: TestTenant;
const ops = { ...SYSTEM_ACTOR, label: "ops" };

const trust = (networks: string) => {
  process.env.TALLY_ALERT_PRIVATE_NETWORKS = networks;
  resetConfigForTests();
};

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push(req.url ?? "");
      if (redirect) {
        res.statusCode = 302;
        res.setHeader("location", "http://169.254.169.254/latest/meta-data/");
      }
      res.end("ok");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  port = (receiver.address() as AddressInfo).port;
  t = await aTenant();
  trust("");
});
afterAll(async () => {
  trust("127.0.0.0/8,::1/128");
  await new Promise<void>((r) => receiver.close(() => r()));
});

/** A channel stored as it is (one saved while its network was trusted, or before the guard). */
async function storedChannel(name: string, url: string) {
  await prisma.alertChannel.create({ data: { tenantId: t.id, kind: "WEBHOOK", name, target: seal(url) } });
}

describe("alert webhooks and addresses that are not public", () => {
  it("are refused when saved, naming the address, for every way of writing one", async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `api.localhost:${port}`,
      "169.254.169.254",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "100.64.0.1",
      "0.0.0.0",
      `[::1]:${port}`,
      `[::ffff:127.0.0.1]:${port}`,
      "[fe80::1]",
      "[fd00::1]",
      "2130706433", // 127.0.0.1 as one number: URL turns it into 127.0.0.1
      "0x7f.1",
    ]) {
      const r = await addChannel(t.id, { kind: "WEBHOOK", name: `w-${host}`, target: `http://${host}/hook` }, ops);
      expect({ host, r }).toMatchObject({
        host,
        r: { ok: false, reason: "invalid_url", message: expect.stringContaining("is not a public address") },
      });
    }
    expect(
      (await addChannel(t.id, { kind: "SLACK", name: "public", target: "https://hooks.slack.example/services/x" }, ops))
        .ok,
    ).toBe(true);
  });

  it("are refused at delivery when a name resolves to one, and nothing reaches the receiver", async () => {
    await storedChannel("rebound", `http://localhost:${port}/hook`);
    received.length = 0;
    expect(await tryChannel(t, "rebound", ops)).toMatchObject({
      ok: false,
      reason: "delivery_failed",
      message: expect.stringMatching(/localhost resolves to (127\.0\.0\.1|::1) is not a public address/),
    });
    expect(received).toEqual([]);
  });

  it("reach a network the operator trusts, and follow no redirect", async () => {
    trust("127.0.0.0/8,::1/128");
    try {
      received.length = 0;
      expect(await tryChannel(t, "rebound", ops)).toMatchObject({ ok: true });
      expect(received).toEqual(["/hook"]);
      redirect = true;
      expect(await tryChannel(t, "rebound", ops)).toMatchObject({
        ok: false,
        message: expect.stringContaining("receiver answered 302, a redirect, which is not followed"),
      });
      expect(received).toEqual(["/hook", "/hook"]);
    } finally {
      redirect = false;
      trust("");
    }
  });

  it("a trusted network that is not one stops the start, naming it", () => {
    expect(() => parseNetworks("10.0.0.0/8, 10.0.0.0/33")).toThrow('"10.0.0.0/33" is not a network');
    process.env.TALLY_ALERT_PRIVATE_NETWORKS = "office";
    resetConfigForTests();
    try {
      expect(() => config()).toThrow(/TALLY_ALERT_PRIVATE_NETWORKS.*"office" is not a network/s);
    } finally {
      trust("");
    }
    expect(refusedAddress("8.8.8.8", parseNetworks(""))).toBeNull();
    expect(refusedAddress("10.9.9.9", parseNetworks("10.0.0.0/8"))).toBeNull();
    expect(refusedAddress("::ffff:10.9.9.9", parseNetworks("10.0.0.0/8"))).toBeNull();
  });
});
