// A statement of 100,000 entries imports from disk as a stream: the file is
// written entry by entry (it never exists as one string either), then imported
// while the process's resident memory is sampled every 20 ms. The bound: the
// peak grows by less than the file's own size, which reading the file whole
// (let alone a DOM of it) could not do.
import { createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { importBankStatement } from "@/lib/bank/import";
import { camt053Stream } from "@/lib/bank/statement-builders";
import { prisma } from "@/lib/platform/db";
import { fileTenant } from "@/dev/testing/file-tenant";

const ENTRIES = 100_000;
const PAYOUTS = 50;
const tenant = fileTenant();
const dir = mkdtempSync(path.join(os.tmpdir(), "tally-bank-large-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a large statement", () => {
  it("imports 100,000 entries from a file without reading it into memory, and matches the payouts among them", async () => {
    const file = path.join(dir, "large.xml");
    const payoutAt = (i: number) => i % (ENTRIES / PAYOUTS) === 7;
    await pipeline(
      Readable.from(
        camt053Stream({ from: "2026-11-01", to: "2026-11-30" }, ENTRIES, (i) =>
          payoutAt(i)
            ? { amount: 100_000n + BigInt(i), bookingDate: "2026-11-16", remittance: ["STRIPE PAYOUT", `po_large${i}`] }
            : {
                amount: BigInt(1 + (i % 997)),
                direction: i % 3 ? "CRDT" : "DBIT",
                bookingDate: `2026-11-${String(1 + (i % 30)).padStart(2, "0")}`,
                acctSvcrRef: `E${i}`,
                remittance: [`Invoice ${i} customer ${i % 4099}`, "Thank you for your business"],
                counterparty: `Customer ${i % 4099} GmbH`,
              },
        ),
      ),
      createWriteStream(file),
    );
    const bytes = statSync(file).size;
    await prisma.payout.createMany({
      data: Array.from({ length: ENTRIES }, (_, i) => i)
        .filter(payoutAt)
        .map((i) => ({
          tenantId: tenant.id,
          provider: "stripe" as const,
          reference: `po_large${i}`,
          currency: "EUR",
          ourAmount: 100_000n + BigInt(i),
          arrivalDate: new Date("2026-11-15T00:00:00Z"),
        })),
    });

    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
    const started = performance.now();
    const r = await importBankStatement({
      tenantId: tenant.id,
      source: { file },
      format: "camt053",
      sourceName: "large.xml",
      actor: { type: "CLI", label: "cli:test" },
    });
    const ms = performance.now() - started;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    if (!r.ok) throw new Error(r.message);
    const growth = peak - baseline;
    console.log(
      `bank import: ${ENTRIES} entries, ${(bytes / 1024 / 1024).toFixed(1)} MiB in ${(ms / 1000).toFixed(1)} s ` +
        `(${Math.round(ENTRIES / (ms / 1000))} entries/s); RSS ${(baseline / 1024 / 1024).toFixed(0)} → peak ${(peak / 1024 / 1024).toFixed(0)} MiB (+${(growth / 1024 / 1024).toFixed(0)} MiB)`,
    );
    expect(r.value).toMatchObject({ lines: ENTRIES, matchedPayouts: PAYOUTS, unmatchedPayouts: 0 });
    expect(await prisma.bankLine.count({ where: { tenantId: tenant.id } })).toBe(ENTRIES);
    expect(await prisma.bankLine.count({ where: { tenantId: tenant.id, matchRule: "reference" } })).toBe(PAYOUTS);
    expect(growth).toBeLessThan(bytes);
  }, 300_000);
});
