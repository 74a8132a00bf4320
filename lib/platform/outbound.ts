// Requests to addresses people typed in (alert webhooks, Slack URLs): an admin's
// URL must not make the worker reach what only the worker can reach (the cloud
// metadata service at 169.254.169.254, the database, a sidecar on localhost, the
// office network). Every address the name resolves to is checked when the
// connection is made, not when the URL was saved, so a name that resolves to a
// public address today and to 127.0.0.1 tomorrow (DNS rebinding) is refused too.
// Networks an operator trusts are listed in TALLY_ALERT_PRIVATE_NETWORKS.
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";

/** Where a public service never is: loopback, private, link-local, carrier NAT, multicast, reserved. */
const NOT_PUBLIC: [string, number, "ipv4" | "ipv6"][] = [
  ["0.0.0.0", 8, "ipv4"],
  ["10.0.0.0", 8, "ipv4"],
  ["100.64.0.0", 10, "ipv4"],
  ["127.0.0.0", 8, "ipv4"],
  ["169.254.0.0", 16, "ipv4"],
  ["172.16.0.0", 12, "ipv4"],
  ["192.0.0.0", 24, "ipv4"],
  ["192.168.0.0", 16, "ipv4"],
  ["198.18.0.0", 15, "ipv4"],
  ["224.0.0.0", 3, "ipv4"],
  ["::", 128, "ipv6"],
  ["::1", 128, "ipv6"],
  ["fc00::", 7, "ipv6"],
  ["fe80::", 10, "ipv6"],
  ["ff00::", 8, "ipv6"],
  ["64:ff9b::", 96, "ipv6"],
];
const notPublic = new net.BlockList();
for (const [address, prefix, type] of NOT_PUBLIC) notPublic.addSubnet(address, prefix, type);

/** Parses "127.0.0.0/8,::1/128" into a list; throws naming the entry that is not a network. */
export function parseNetworks(text: string): net.BlockList {
  const list = new net.BlockList();
  for (const entry of text
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [address, prefixText] = entry.split("/");
    const type = net.isIPv4(address ?? "") ? "ipv4" : net.isIPv6(address ?? "") ? "ipv6" : null;
    const prefix = Number(prefixText ?? (type === "ipv4" ? 32 : 128));
    if (!type || !Number.isInteger(prefix) || prefix < 0 || prefix > (type === "ipv4" ? 32 : 128))
      throw new Error(`"${entry}" is not a network (an address with an optional /prefix)`);
    list.addSubnet(address!, prefix, type);
  }
  return list;
}

/** An IPv4 address written as IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it is. */
function unmapped(address: string): { address: string; type: "ipv4" | "ipv6" } {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return { address: m[1]!, type: "ipv4" };
  return { address, type: net.isIPv4(address) ? "ipv4" : "ipv6" };
}

/** Why the address may not be reached, or null when it may. */
export function refusedAddress(address: string, trusted: net.BlockList): string | null {
  const a = unmapped(address);
  if (!notPublic.check(a.address, a.type) || trusted.check(a.address, a.type)) return null;
  return `${address} is not a public address (loopback, private, link-local or reserved); list its network in TALLY_ALERT_PRIVATE_NETWORKS to allow it`;
}

export class OutboundRefused extends Error {}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/** dns.lookup that answers only with addresses that may be reached; one that may not fails the connection. */
function guardedLookup(trusted: net.BlockList) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      for (const { address } of addresses) {
        const why = refusedAddress(address, trusted);
        if (why) return callback(new OutboundRefused(`${hostname} resolves to ${why}`), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

export type OutboundResponse = { status: number; text: string };

/**
 * POSTs a JSON body to a URL someone configured, refusing addresses that are not
 * public (unless trusted), following no redirect, within timeoutMs.
 */
export function postJsonGuarded(
  url: string,
  headers: Record<string, string>,
  body: string,
  { trusted, timeoutMs = 10_000 }: { trusted: net.BlockList; timeoutMs?: number },
): Promise<OutboundResponse> {
  const target = new URL(url);
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  // A literal address is connected to without a lookup: judge it here.
  if (net.isIP(host)) {
    const why = refusedAddress(host, trusted);
    if (why) return Promise.reject(new OutboundRefused(why));
  }
  const client = target.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      target,
      {
        method: "POST",
        headers: { ...headers, "content-length": Buffer.byteLength(body) },
        lookup: guardedLookup(trusted) as unknown as typeof dns.lookup,
        timeout: timeoutMs,
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          if (text.length < 4096) text += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on("error", reject);
    request.end(body);
  });
}
