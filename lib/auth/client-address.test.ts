import { afterEach, describe, expect, it } from "vitest";
import { clientAddress, PEER_HEADER } from "@/lib/auth/client-address";
import { resetConfigForTests } from "@/lib/platform/config";

const from = (peer: string | null, forwardedFor?: string) =>
  clientAddress(
    new Request("http://tally.test/api/auth/login", {
      headers: {
        ...(peer !== null && { [PEER_HEADER]: peer }),
        ...(forwardedFor !== undefined && { "x-forwarded-for": forwardedFor }),
      },
    }),
  );

const trusting = (proxies: string) => {
  process.env.TALLY_TRUSTED_PROXIES = proxies;
  resetConfigForTests();
};

afterEach(() => {
  delete process.env.TALLY_TRUSTED_PROXIES;
  resetConfigForTests();
});

describe("the client address", () => {
  it("is the connection's peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    for (const xff of ["6.6.6.6", "6.6.6.6, 127.0.0.1", "", "garbage", "1.1.1.1, 2.2.2.2, 3.3.3.3"])
      expect(from("192.0.2.1", xff)).toBe("192.0.2.1");
    expect(from("::ffff:192.0.2.1", "6.6.6.6")).toBe("192.0.2.1");
    expect(from("2001:db8::5", "6.6.6.6")).toBe("2001:db8::5");
  });

  it("is 'unknown' when the server did not stamp the peer, never a forwarded value", () => {
    expect(from(null, "6.6.6.6")).toBe("unknown");
    expect(from("not-an-ip", "6.6.6.6")).toBe("unknown");
  });

  it("behind trusted proxies, is the first hop from the right that is not one of them", () => {
    trusting("10.0.0.0/8,192.168.1.1");
    expect(from("10.0.0.2", "198.51.100.7")).toBe("198.51.100.7");
    expect(from("10.0.0.2", "6.6.6.6, 198.51.100.7")).toBe("198.51.100.7");
    expect(from("10.0.0.2", "6.6.6.6, 198.51.100.7, 192.168.1.1, 10.1.2.3")).toBe("198.51.100.7");
    // A trusted peer that forwarded nothing is itself the client.
    expect(from("10.0.0.2")).toBe("10.0.0.2");
    // Garbage where an address should be stops the walk at the last hop trusted.
    expect(from("10.0.0.2", "198.51.100.7, <script>")).toBe("10.0.0.2");
    // An untrusted peer's X-Forwarded-For is never read, even if it names a trusted proxy.
    expect(from("203.0.113.5", "6.6.6.6, 10.0.0.1")).toBe("203.0.113.5");
  });

  it("matches IPv6 ranges and IPv4-mapped peers", () => {
    trusting("2001:db8::/32, 127.0.0.1");
    expect(from("2001:db8::9", "198.51.100.8")).toBe("198.51.100.8");
    expect(from("::ffff:127.0.0.1", "::ffff:198.51.100.8")).toBe("198.51.100.8");
  });
});
