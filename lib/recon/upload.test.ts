import { existsSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { receiveReport, reportFileName } from "@/lib/recon/upload";

/** A request body arriving in chunks, as a browser upload does. */
function body(chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
      controller.close();
    },
  });
}

describe("receiving an uploaded settlement report", () => {
  it("streams the body to a temporary file named as the person named it, and removes it after", async () => {
    const r = await receiveReport(
      body(["reference,kind,amount,currency,occurred_at\n", "pi_1,payment,1.00,USD,2026-12-01T10:00:00Z\n"]),
      { maxBytes: 1024, fileName: "../../etc/Stripe report (Dec).csv" },
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(path.basename(r.file)).toBe("Stripe report _Dec_.csv");
    expect(readFileSync(r.file, "utf8")).toContain("pi_1,payment");
    expect(r.bytes).toBe(86);
    await r.remove();
    expect(existsSync(r.file)).toBe(false);
  });

  it("refuses a body past the cap without keeping any of it, and an empty one", async () => {
    const uploads = () =>
      readdirSync(os.tmpdir())
        .filter((d) => d.startsWith("tally-upload-"))
        .sort();
    const before = uploads();
    const r = await receiveReport(body(["x".repeat(600), "y".repeat(600)]), { maxBytes: 1000, fileName: "big.csv" });
    expect(r).toMatchObject({ ok: false, reason: "too_large" });
    expect(uploads()).toEqual(before);
    expect(await receiveReport(body([]), { maxBytes: 1000, fileName: "empty.csv" })).toMatchObject({
      ok: false,
      reason: "empty",
    });
    expect(await receiveReport(null, { maxBytes: 1000, fileName: "none.csv" })).toMatchObject({
      ok: false,
      reason: "empty",
    });
    expect(reportFileName("")).toBe("settlement-report.csv");
  });
});
