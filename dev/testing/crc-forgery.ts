// An adversarial builder: a body with a chosen CRC-32, the way an attacker turns one
// captured PayPal delivery into another that its signature still verifies (PayPal
// signs crc32(body), not the body). CRC-32 is affine over GF(2) in the message bits
// for a fixed length, so a padding field of characters that each leave 4 bits free
// ('@', 'A' … 'O' are 0x40 | nibble, all plain JSON string characters) gives a
// linear system; 10 of them (40 unknowns for 32 equations) always leave a solution
// in practice. Uses zlib's CRC-32, independent of the product's.
import { crc32 } from "node:zlib";

const PAD_CHARS = 10;

const padOf = (bits: bigint) =>
  Array.from({ length: PAD_CHARS }, (_, i) => String.fromCharCode(0x40 | Number((bits >> BigInt(4 * i)) & 0xfn))).join(
    "",
  );

/**
 * Returns build(pad) for a `pad` of 10 characters chosen so that its CRC-32 equals
 * `target`; build must put pad at the same place whatever its value (a JSON string).
 */
export function withCrc32(target: number, build: (pad: string) => string): string {
  const crcOf = (bits: bigint) => crc32(Buffer.from(build(padOf(bits)), "utf8")) >>> 0;
  const base = crcOf(0n);
  // Gaussian elimination over GF(2): each pivot row keeps the unknowns that make it.
  const pivots = new Map<number, { value: number; bits: bigint }>();
  for (let i = 0; i < PAD_CHARS * 4; i++) {
    let value = (crcOf(1n << BigInt(i)) ^ base) >>> 0;
    let bits = 1n << BigInt(i);
    for (let b = 31; b >= 0 && value !== 0; b--) {
      if (!((value >>> b) & 1)) continue;
      const row = pivots.get(b);
      if (!row) {
        pivots.set(b, { value, bits });
        break;
      }
      value = (value ^ row.value) >>> 0;
      bits ^= row.bits;
    }
  }
  let want = (target ^ base) >>> 0;
  let solution = 0n;
  for (let b = 31; b >= 0; b--) {
    if (!((want >>> b) & 1)) continue;
    const row = pivots.get(b);
    if (!row) throw new Error("no padding reaches that CRC-32 (rank below 32): use another layout");
    want = (want ^ row.value) >>> 0;
    solution ^= row.bits;
  }
  const forged = build(padOf(solution));
  if (crc32(Buffer.from(forged, "utf8")) >>> 0 !== target >>> 0)
    throw new Error("CRC-32 forgery did not reach the target");
  return forged;
}
