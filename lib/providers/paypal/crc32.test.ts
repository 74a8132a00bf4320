import { randomBytes } from "node:crypto";
import { crc32 as zlibCrc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { crc32 } from "@/lib/providers/paypal/crc32";

const of = (text: string) => crc32(Buffer.from(text, "utf8"));

describe("crc32", () => {
  it("matches published CRC-32 values", () => {
    expect(of("")).toBe(0);
    expect(of("a")).toBe(0xe8b7be43);
    expect(of("123456789")).toBe(0xcbf43926); // the "check" value of CRC-32/ISO-HDLC
    expect(of("The quick brown fox jumps over the lazy dog")).toBe(0x414fa339);
    expect(of("The quick brown fox jumps over the lazy dog")).toBe(1095738169);
  });

  it("is unsigned: values with the top bit set stay positive", () => {
    expect(of("123456789")).toBeGreaterThan(2 ** 31);
    expect(String(of("123456789"))).toBe("3421780262");
  });

  it("agrees with zlib's implementation on random inputs of many lengths", () => {
    for (const length of [1, 2, 3, 7, 64, 1000, 65_537]) {
      const data = randomBytes(length);
      expect(crc32(data)).toBe(zlibCrc32(data));
    }
  });
});
