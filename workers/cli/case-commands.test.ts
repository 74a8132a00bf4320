// `npm run tally -- cases list` as an operator runs it: a real process.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { aTenant } from "@/dev/testing/builders";

function tally(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "workers/tally.ts", ...args], {
    encoding: "utf8",
    env: process.env,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("npm run tally -- cases list", () => {
  it("lists open cases with their pending proposal, and refuses a bad --state", async () => {
    const tenant = await aTenant();
    const run = await prisma.reconRun.create({
      data: {
        tenantId: tenant.id,
        provider: "stripe",
        windowFrom: new Date(Date.now() - 86_400_000),
        windowTo: new Date(),
        source: "API",
        actorType: "SYSTEM",
        actorLabel: "test",
        status: "DONE",
      },
    });
    const open = await prisma.reconDiscrepancy.create({
      data: {
        tenantId: tenant.id,
        provider: "stripe",
        reference: "pi_cli_open",
        bucket: "OURS_NOT_THEIRS",
        cause: "MISSING_AT_PROVIDER",
        day: new Date("2026-12-01"),
        ourAmount: 4200n,
        ourCurrency: "USD",
        firstRunId: run.id,
        lastRunId: run.id,
      },
    });
    const closed = await prisma.reconDiscrepancy.create({
      data: {
        tenantId: tenant.id,
        provider: "stripe",
        reference: "pi_cli_closed",
        bucket: "MISMATCH",
        cause: "AMOUNT_DIFFERS",
        state: "RESOLVED",
        day: new Date("2026-12-01"),
        ourAmount: 100n,
        ourCurrency: "USD",
        theirAmount: 90n,
        theirCurrency: "USD",
        firstRunId: run.id,
        lastRunId: run.id,
      },
    });
    await prisma.case.create({ data: { tenantId: tenant.id, discrepancyId: open.id, kind: "OURS_NOT_THEIRS" } });
    await prisma.case.create({
      data: {
        tenantId: tenant.id,
        discrepancyId: closed.id,
        kind: "MISMATCH",
        status: "RESOLVED",
        closedAt: new Date(),
        resolution: "matched",
      },
    });

    const listed = tally("cases", "list", "--tenant", tenant.slug);
    expect(listed).toMatchObject({ code: 0, out: expect.stringContaining("pi_cli_open") });
    expect(listed.out).not.toContain("pi_cli_closed");
    expect(listed.out).toContain("ours-not-theirs");
    expect(tally("cases", "list", "--tenant", tenant.slug, "--state", "all").out).toContain("pi_cli_closed");
    expect(tally("cases", "list", "--tenant", tenant.slug, "--state", "later")).toMatchObject({
      code: 2,
      err: expect.stringContaining("--state must be open, snoozed, closed or all"),
    });
  });
});
