// Primitives shared by the signature schemes: HMAC over the exact bytes received,
// and comparisons whose timing does not leak how much of a signature matched.
import { createHmac, timingSafeEqual } from "node:crypto";

export function hmac(algorithm: "sha256" | "sha512", key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** Constant-time for equal lengths; a length mismatch is not secret (it is the signature's format). */
export function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export function decodeBase64(value: string): Buffer | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value)) return null;
  return Buffer.from(value, "base64");
}

export function decodeHex(value: string): Buffer | null {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(value)) return null;
  return Buffer.from(value, "hex");
}

/** Seconds between a signed timestamp and now, when it falls outside the tolerance; else null. */
export function skewBeyond(timestamp: number, now: number, toleranceSeconds: number): number | null {
  const skew = now - timestamp;
  return Math.abs(skew) > toleranceSeconds ? skew : null;
}
