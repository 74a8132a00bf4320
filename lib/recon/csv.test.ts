import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { MAX_RECORD_CHARS, readCsv } from "@/lib/recon/csv";

const read = async (...chunks: string[]) => {
  const out = [];
  for await (const r of readCsv(Readable.from(chunks.map((c) => Buffer.from(c))))) out.push(r);
  return out;
};

describe("the streaming CSV reader", () => {
  it("reads plain, quoted, escaped and multi-line fields, with CRLF or LF, across chunk boundaries", async () => {
    const text = 'a,b,c\r\n1,"two, with comma","say ""hi"""\n3,"line\nbreak",\r\n\n"x",,z';
    for (const split of [1, 2, 5, text.length]) {
      const chunks = Array.from({ length: Math.ceil(text.length / split) }, (_, i) =>
        text.slice(i * split, (i + 1) * split),
      );
      expect(await read(...chunks)).toEqual([
        { row: 1, fields: ["a", "b", "c"], raw: "a,b,c" },
        { row: 2, fields: ["1", "two, with comma", 'say "hi"'], raw: '1,"two, with comma","say ""hi"""' },
        { row: 3, fields: ["3", "line\nbreak", ""], raw: '3,"line\nbreak",' },
        { row: 4, fields: ["x", "", "z"], raw: '"x",,z' },
      ]);
    }
  });

  it("keeps multi-byte characters split across chunks intact, and drops a BOM", async () => {
    const bytes = Buffer.from("\ufeffname\ncafé ✓\n");
    const chunks = [bytes.subarray(0, 9), bytes.subarray(9, 14), bytes.subarray(14)];
    const out = [];
    for await (const r of readCsv(Readable.from(chunks))) out.push(r.fields[0]);
    expect(out).toEqual(["name", "café ✓"]);
  });

  it("names the row and column of an unclosed quote, a stray one, or a NUL byte", async () => {
    await expect(read('a,b\n1,"open\n2,3\n')).rejects.toThrow("row 2, column 2: a quoted field is never closed");
    await expect(read('a,b\n1,x"y"\n')).rejects.toThrow("row 2, column 2: stray quote in an unquoted field");
    await expect(read('a,b\n"1"x,2\n')).rejects.toThrow("row 2, column 1: unexpected text after a closing quote");
    await expect(read("a,b\n1,2\n3,x\u0000y\n")).rejects.toThrow("row 3, column 2: contains a NUL byte");
  });

  it("ends records at LF and CRLF mixed in one file, and skips empty lines", async () => {
    expect((await read("a,b\r\n1,2\n\n3,4\r\n\r\n5,6")).map((r) => [r.row, ...r.fields, r.raw])).toEqual([
      [1, "a", "b", "a,b"],
      [2, "1", "2", "1,2"],
      [3, "3", "4", "3,4"],
      [4, "5", "6", "5,6"],
    ]);
  });
});

// Hostile files, as someone with upload rights (or a broken export) would send them.
const MiB = 1024 * 1024;
const HEADER = "reference,kind,amount,currency,occurred_at\n";
const HOSTILE: Record<string, (bytes: number) => Buffer> = {
  "an unclosed quote at the start": (n) =>
    Buffer.from(`${HEADER}"${"pi_1,payment,1.00,USD,2026-12-01T10:00:00Z\n".repeat(Math.ceil(n / 43))}`),
  "a single field as large as the file": (n) => Buffer.from(HEADER + "x".repeat(n)),
  "a single quoted field as large as the file": (n) =>
    Buffer.from(`${HEADER}"${"y".repeat(n)}",payment,1,USD,2026-12-01T10:00:00Z\n`),
  "millions of tiny rows": (n) => Buffer.from("a\n".repeat(n / 2)),
  "CRLF and LF alternating": (n) => Buffer.from("a,b\r\n1,2\n".repeat(Math.ceil(n / 10))),
  "quoted line breaks on every row": (n) => Buffer.from('"a\nb","c""d"\n'.repeat(Math.ceil(n / 14))),
};

/** Reads the whole file in 64 KiB chunks (as from disk); the outcome and the time it took. */
async function readAll(file: Buffer): Promise<{ ms: number; outcome: string }> {
  const chunks = Array.from({ length: Math.ceil(file.length / 65_536) }, (_, i) =>
    file.subarray(i * 65_536, (i + 1) * 65_536),
  );
  const started = performance.now();
  let rows = 0;
  let outcome: string;
  try {
    for await (const _ of readCsv(Readable.from(chunks))) rows++;
    outcome = `${rows} rows`;
  } catch (error) {
    outcome = (error as Error).message;
  }
  return { ms: performance.now() - started, outcome };
}

const best = async (file: Buffer) => {
  const runs = [await readAll(file), await readAll(file), await readAll(file)];
  return { ms: Math.min(...runs.map((r) => r.ms)), outcome: runs[0]!.outcome };
};

describe("hostile report files are refused or read in linear time", () => {
  for (const [name, build] of Object.entries(HOSTILE)) {
    it(name, async () => {
      // 512 KiB vs 2 MiB: the same 4x ratio, affordable on 2 shared cores (millions of 2-byte rows take seconds).
      const small = await best(build(MiB / 2));
      const large = await best(build(2 * MiB));
      console.log(`${name}: 512 KiB ${small.ms.toFixed(0)} ms, 2 MiB ${large.ms.toFixed(0)} ms (${large.outcome})`);
      // 4x the bytes may cost at most 8x the time (linear, with noise); quadratic would be 16x.
      // 6x failed once with a neighbour's tests on the other core (quoted line breaks: 54 vs 351 ms, 6.5x).
      expect(large.ms).toBeLessThan(Math.max(small.ms, 20) * 8);
    }, 300_000);
  }

  it("a 5 MiB file with an unclosed quote or one huge field is refused naming the row and column", async () => {
    const unclosed = await readAll(HOSTILE["an unclosed quote at the start"]!(5 * MiB));
    expect(unclosed.outcome).toBe(
      `row 2, column 1: the record is longer than ${MAX_RECORD_CHARS} characters (an unclosed quote, or not a settlement report)`,
    );
    const field = await readAll(HOSTILE["a single field as large as the file"]!(5 * MiB));
    expect(field.outcome).toMatch(/^row 2, column 1: the record is longer than/);
    expect((await readAll(Buffer.from("\ufeffa,b\n1,2\n"))).outcome).toBe("2 rows");
  });
});
