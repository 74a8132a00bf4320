// `npm run tally -- recon trend` as an operator runs it: a real process over a seeded history.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { aTenant } from "@/dev/testing/builders";

const DAY = 86_400_000;

function tally(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "workers/tally.ts", ...args], {
    encoding: "utf8",
    env: process.env,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("npm run tally -- recon trend", () => {
  it("shows each day's causes and control limit, and names the day above it", async () => {
    const tenant = await aTenant();
    const today = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()));
    const dayAgo = (n: number) => new Date(today.getTime() - n * DAY);
    const run = await prisma.reconRun.create({
      data: {
        tenantId: tenant.id,
        provider: "stripe",
        windowFrom: dayAgo(12),
        windowTo: today,
        source: "API",
        actorType: "SYSTEM",
        actorLabel: "test",
        status: "DONE",
      },
    });
    // Ten days of 1 in 100, then yesterday 30 in 100 (mostly unparseable deliveries).
    const days = Array.from({ length: 11 }, (_, i) => ({ ago: 11 - i, n: i === 10 ? 30 : 1 }));
    await prisma.reconDayStat.createMany({
      data: days.map((d) => ({ tenantId: tenant.id, provider: "stripe" as const, day: dayAgo(d.ago), compared: 100 })),
    });
    await prisma.reconDiscrepancy.createMany({
      data: days.flatMap((d) =>
        Array.from({ length: d.n }, (_, i) => ({
          tenantId: tenant.id,
          provider: "stripe" as const,
          reference: `pi_trend_${d.ago}_${i}`,
          bucket: "THEIRS_NOT_OURS" as const,
          cause: i < 25 && d.n > 1 ? ("PARSE_FAILED" as const) : ("NEVER_DELIVERED" as const),
          day: dayAgo(d.ago),
          theirAmount: 100n,
          theirCurrency: "USD",
          firstRunId: run.id,
          lastRunId: run.id,
        })),
      ),
    });
    const yesterday = dayAgo(1).toISOString().slice(0, 10);
    // p̄ = 10/1000 = 1%; the limit is 1% + 3·sqrt(0.01·0.99/100) = 3.98...%.
    const text = `${yesterday} stripe (rate 30.0% > limit 4.0%)`;

    const r = tally("recon", "trend", "--tenant", tenant.slug, "--days", "8");
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`Breaches: ${text}`);
    const row = r.out.split("\n").find((l) => l.startsWith(yesterday))!;
    expect(row).toContain("4.0% BREACH");
    expect(row).toContain("never delivered 5, parse failed 25");
    // The first day shown (7 days ago) has 4 reconciled days before it: not judged.
    expect(r.out.split("\n").find((l) => l.startsWith(dayAgo(7).toISOString().slice(0, 10)))).toContain(
      "not enough history (4 of 7 days)",
    );

    const json = tally("recon", "trend", "--tenant", tenant.slug, "--days", "8", "--json");
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({ breaches: [text] });
  });
});
