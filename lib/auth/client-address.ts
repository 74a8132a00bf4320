// The client's address, for the sign-in limits and the audit log. It is the
// connection's peer (stamped by workers/web.ts in PEER_HEADER, never taken from
// the client), unless that peer is a proxy listed in TALLY_TRUSTED_PROXIES; then
// X-Forwarded-For is read from the right, each hop a trusted proxy vouching for
// the one before it, and the first address that is not a trusted proxy is the
// client. Whatever a client writes into X-Forwarded-For lies to the left of what
// its proxy appended, so it is never reached.
import { BlockList, isIP } from "node:net";
import { config } from "@/lib/platform/config";

export const PEER_HEADER = "x-tally-peer";

/** "::ffff:10.0.0.1" (an IPv4 peer on a dual-stack socket) is 10.0.0.1. */
function normalise(address: string): string {
  const a = address.trim().toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(a);
  return mapped ? mapped[1]! : a;
}

let cached: { source: string; list: BlockList } | undefined;

/** TALLY_TRUSTED_PROXIES as a BlockList (addresses and CIDR ranges, IPv4 and IPv6). */
function trustedProxies(): BlockList {
  const source = config().TALLY_TRUSTED_PROXIES;
  if (cached?.source === source) return cached.list;
  const list = new BlockList();
  for (const entry of source
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [address, bits] = entry.split("/") as [string, string | undefined];
    const family = isIP(normalise(address)) === 6 ? "ipv6" : "ipv4";
    if (bits === undefined) list.addAddress(normalise(address), family);
    else list.addSubnet(normalise(address), Number(bits), family);
  }
  cached = { source, list };
  return list;
}

function isTrusted(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && trustedProxies().check(address, family === 6 ? "ipv6" : "ipv4");
}

export function clientAddress(request: Request): string {
  const peer = normalise(request.headers.get(PEER_HEADER) ?? "");
  if (!isIP(peer)) return "unknown";
  if (!isTrusted(peer)) return peer;
  const hops = (request.headers.get("x-forwarded-for") ?? "").split(",").map(normalise).filter(Boolean);
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    // Garbage where an address should be was written by someone we do not trust:
    // the last trusted hop saw the client, so stop there.
    if (!isIP(hop)) break;
    client = hop;
    if (!isTrusted(hop)) break;
  }
  return client;
}
