// Demo data for the README's start command: a tenant with signing secrets,
// four users, and 90 days of seeded discrepancy history for the overview chart
// (labelled as such). Created once; the generated secrets and passwords are kept
// in a local file (mode 0600) so every start can print them again. The live part
// (a provider simulator, a day of deliveries, a reconciliation run) is dev/demo-live.ts.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import type { DiscrepancyBucket, DiscrepancyCause, Provider } from "@/lib/generated/prisma/enums";
import { seeded } from "@/lib/providers/simulation/random";
import { addSecret, createTenant, generateSecret } from "@/lib/admin/tenants";
import { createUser } from "@/lib/admin/users";

export type DemoCredentials = {
  tenant: string;
  secrets: { stripe: string; standard: string };
  users: { email: string; role: string; password: string }[];
};

const USERS = [
  { email: "admin@demo.tally", role: "admin", name: "Ada Admin" },
  { email: "ops@demo.tally", role: "ops", name: "Otto Ops" },
  { email: "accountant.a@demo.tally", role: "accountant", name: "Alice Accountant" },
  { email: "accountant.b@demo.tally", role: "accountant", name: "Bruno Accountant" },
] as const;

export async function seedDemo(credentialsFile: string): Promise<DemoCredentials> {
  const saved: DemoCredentials | null = existsSync(credentialsFile)
    ? JSON.parse(readFileSync(credentialsFile, "utf8"))
    : null;
  const creds: DemoCredentials = saved ?? {
    tenant: "demo",
    secrets: { stripe: generateSecret("stripe"), standard: generateSecret("standard") },
    users: [],
  };

  if (!(await prisma.tenant.findUnique({ where: { slug: creds.tenant } }))) {
    const t = await createTenant({ slug: creds.tenant, name: "Demo Payments Ltd" }, SYSTEM_ACTOR);
    if (!t.ok) throw new Error(t.message);
    for (const provider of ["stripe", "standard"] as const) {
      const r = await addSecret(creds.tenant, provider, creds.secrets[provider], { label: "demo" }, SYSTEM_ACTOR);
      if (!r.ok) throw new Error(r.message);
    }
  }
  for (const u of USERS) {
    if (await prisma.user.findUnique({ where: { email: u.email } })) continue;
    const r = await createUser(
      { email: u.email, role: u.role, name: u.name, tenants: u.role === "admin" ? [] : [creds.tenant] },
      SYSTEM_ACTOR,
    );
    if (!r.ok) throw new Error(r.message);
    creds.users = creds.users
      .filter((x) => x.email !== u.email)
      .concat({ email: u.email, role: u.role, password: r.value.password });
  }
  const tenant = await prisma.tenant.findUniqueOrThrow({ where: { slug: creds.tenant } });
  await seedDemoHistory(tenant.id);
  mkdirSync(path.dirname(credentialsFile), { recursive: true });
  writeFileSync(credentialsFile, JSON.stringify(creds, null, 2), { mode: 0o600 });
  return creds;
}

const DAY = 86_400_000;
export const DEMO_HISTORY_SOURCE = "seeded demo history (not a real run)";
const HISTORY_NOTE = "seeded demo history: not a real discrepancy";

/**
 * 90 days of daily discrepancy counts for two providers, ending the day before
 * yesterday: falling with noise, as a team fixing its causes would see it.
 * One run row per provider, clearly labelled, owns the rows; seeded once.
 */
export async function seedDemoHistory(tenantId: string, now = new Date()): Promise<boolean> {
  if (await prisma.reconRun.findFirst({ where: { tenantId, sourceName: DEMO_HISTORY_SOURCE } })) return false;
  const r = seeded(90_2026);
  const lastDay = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - 2 * DAY);
  const firstDay = new Date(lastDay.getTime() - 89 * DAY);
  // Expected discrepancies on day i (0 = oldest): stripe from ~22 to ~4, standard from ~10 to ~2.
  const rates: [Provider, (i: number) => number, [number, number]][] = [
    ["stripe", (i) => 4 + 18 * (1 - i / 89) ** 1.5, [150, 260]],
    ["standard", (i) => 2 + 8 * (1 - i / 89), [60, 120]],
  ];
  for (const [provider, rate, [minCompared, maxCompared]] of rates) {
    const days = Array.from({ length: 90 }, (_, i) => {
      const compared = r.int(minCompared, maxCompared);
      const count = Math.max(0, Math.round(rate(i) + (r.next() - 0.5) * 5));
      return { day: new Date(firstDay.getTime() + i * DAY), compared, count };
    });
    const totals = { compared: 0, theirs: 0, ours: 0, mismatched: 0 };
    const rows = days.flatMap(({ day, count }) =>
      Array.from({ length: count }, (_, n) => {
        const roll = r.next();
        const bucket: DiscrepancyBucket = roll < 0.75 ? "THEIRS_NOT_OURS" : roll < 0.9 ? "OURS_NOT_THEIRS" : "MISMATCH";
        const amount = BigInt(r.int(500, 25_000));
        totals[bucket === "THEIRS_NOT_OURS" ? "theirs" : bucket === "OURS_NOT_THEIRS" ? "ours" : "mismatched"]++;
        return {
          tenantId,
          provider,
          reference: `demo_history_${provider}_${day.toISOString().slice(0, 10)}_${n}`,
          bucket,
          cause: (bucket === "THEIRS_NOT_OURS"
            ? "NEVER_DELIVERED"
            : bucket === "OURS_NOT_THEIRS"
              ? "MISSING_AT_PROVIDER"
              : "AMOUNT_DIFFERS") as DiscrepancyCause,
          state: "RESOLVED" as const,
          day,
          theirAmount: bucket === "OURS_NOT_THEIRS" ? null : amount,
          theirCurrency: bucket === "OURS_NOT_THEIRS" ? null : "USD",
          ourAmount: bucket === "THEIRS_NOT_OURS" ? null : bucket === "MISMATCH" ? amount + 100n : amount,
          ourCurrency: bucket === "THEIRS_NOT_OURS" ? null : "USD",
          note: HISTORY_NOTE,
          resolvedAt: day,
        };
      }),
    );
    totals.compared = days.reduce((a, d) => a + d.compared, 0);
    await prisma.$transaction(
      async (tx) => {
        const run = await tx.reconRun.create({
          data: {
            tenantId,
            provider,
            windowFrom: firstDay,
            windowTo: new Date(lastDay.getTime() + DAY),
            source: "API",
            sourceName: DEMO_HISTORY_SOURCE,
            actorType: "SYSTEM",
            actorLabel: "demo seed",
            status: "DONE",
            finishedAt: now,
            durationMs: 0,
            compared: totals.compared,
            matched: totals.compared - rows.length,
            theirsNotOurs: totals.theirs,
            oursNotTheirs: totals.ours,
            mismatched: totals.mismatched,
          },
        });
        await tx.reconDiscrepancy.createMany({
          data: rows.map((row) => ({ ...row, firstRunId: run.id, lastRunId: run.id, detectedAt: row.day })),
        });
        const ids = await tx.reconDiscrepancy.findMany({
          where: { tenantId, provider, note: HISTORY_NOTE },
          select: { id: true },
        });
        await tx.reconRunItem.createMany({ data: ids.map((d) => ({ runId: run.id, discrepancyId: d.id })) });
        await tx.reconDayStat.createMany({
          data: days.map((d) => ({ tenantId, provider, day: d.day, compared: d.compared })),
          skipDuplicates: true,
        });
      },
      { timeout: 60_000 },
    );
  }
  return true;
}
