import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readCsv } from "@/lib/recon/csv";

const read = async (...chunks: string[]) => {
  const out = [];
  for await (const r of readCsv(Readable.from(chunks.map((c) => Buffer.from(c))))) out.push(r);
  return out;
};

describe("the streaming CSV reader", () => {
  it("reads plain, quoted, escaped and multi-line fields, with CRLF or LF, across chunk boundaries", async () => {
    const text = 'a,b,c\r\n1,"two, with comma","say ""hi"""\n3,"line\nbreak",\r\n\n"x",,z';
    for (const split of [1, 2, 5, text.length]) {
      const chunks = Array.from({ length: Math.ceil(text.length / split) }, (_, i) => text.slice(i * split, (i + 1) * split));
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

  it("names the row of an unclosed quote or a stray one", async () => {
    await expect(read('a,b\n1,"open\n2,3\n')).rejects.toThrow("row 2: a quoted field is never closed");
    await expect(read('a,b\n1,x"y"\n')).rejects.toThrow('row 2: stray quote in an unquoted field "x"y""');
    await expect(read('a,b\n"1"x,2\n')).rejects.toThrow("row 2: unexpected text after a closing quote");
  });
});
