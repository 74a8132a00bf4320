// `npm run tally -- bank import` as an operator runs it: a real process.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { aCamt053 } from "@/lib/bank/statement-builders";
import { prisma } from "@/lib/platform/db";
import { aTenant } from "@/dev/testing/builders";

const dir = mkdtempSync(path.join(os.tmpdir(), "tally-bank-cli-"));

function tally(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "workers/tally.ts", ...args], {
    encoding: "utf8",
    env: process.env,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("npm run tally -- bank import", () => {
  it("imports a camt.053 and a CSV with its layout, matches the payout, and refuses what it cannot read", async () => {
    const tenant = await aTenant();
    const payout = await prisma.payout.create({
      data: {
        tenantId: tenant.id,
        provider: "stripe",
        reference: "po_cliMatch01",
        currency: "EUR",
        ourAmount: 9_900n,
        arrivalDate: new Date("2026-12-02T00:00:00Z"),
      },
    });
    const xml = path.join(dir, "december.xml");
    writeFileSync(
      xml,
      aCamt053({ from: "2026-12-01", to: "2026-12-03", entries: [{ amount: 9_900n, remittance: ["po_cliMatch01"] }] }),
    );
    const camt = tally("bank", "import", "--tenant", tenant.slug, "--file", xml, "--format", "camt053");
    expect(camt.err).toBe("");
    expect(camt.code).toBe(0);
    expect(camt.out).toMatch(
      /^Statement \d+ \(DE89370400440532013000, 2026-12-01 → 2026-12-03\): 1 line, 1 credit, 0 debits/,
    );
    expect(camt.out).toMatch(/payouts matched\s+1\s+by 1 credit/);
    expect((await prisma.payout.findUniqueOrThrow({ where: { id: payout.id } })).status).toBe("SETTLED");

    const csv = path.join(dir, "konto.csv");
    writeFileSync(csv, "Datum;Betrag\n04.12.2026;12,00\n");
    const layout = path.join(dir, "layout.json");
    writeFileSync(
      layout,
      JSON.stringify({
        account: "Giro",
        delimiter: ";",
        dateColumn: "Datum",
        dateFormat: "DD.MM.YYYY",
        amountColumn: "Betrag",
        decimalSeparator: ",",
        currency: "EUR",
      }),
    );
    const fromCsv = tally(
      "bank",
      "import",
      "--tenant",
      tenant.slug,
      "--file",
      csv,
      "--format",
      "csv",
      "--layout",
      layout,
      "--json",
    );
    expect(fromCsv.code).toBe(0);
    expect(JSON.parse(fromCsv.out)).toMatchObject({ lines: 1, credits: 1, account: "Giro" });

    const again = tally("bank", "import", "--tenant", tenant.slug, "--file", xml, "--format", "camt053");
    expect([again.code, again.err]).toEqual([
      1,
      expect.stringMatching(/^Error: This file was imported already: statement #\d+ \(december.xml\)/),
    ]);
    const noLayout = tally("bank", "import", "--tenant", tenant.slug, "--file", csv, "--format", "csv");
    expect([noLayout.code, noLayout.err.trim()]).toEqual([2, expect.stringMatching(/needs --layout/)]);
    const badFormat = tally("bank", "import", "--tenant", tenant.slug, "--file", csv, "--format", "mt940");
    expect([badFormat.code, badFormat.err.trim()]).toEqual([2, '--format must be camt053 or csv; got "mt940"']);
    writeFileSync(path.join(dir, "bad.xml"), "<Document><Ntry>");
    const bad = tally(
      "bank",
      "import",
      "--tenant",
      tenant.slug,
      "--file",
      path.join(dir, "bad.xml"),
      "--format",
      "camt053",
    );
    expect([bad.code, bad.err]).toEqual([
      1,
      expect.stringMatching(
        /^Error: Statement refused, nothing imported: line 1, column \d+ \(<Document>\): not a camt.053/,
      ),
    ]);

    const list = tally("bank", "statements", "--tenant", tenant.slug);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/konto\.csv\s+Giro/);
    expect(list.out).toMatch(/december\.xml\s+DE89370400440532013000/);
  });
});
