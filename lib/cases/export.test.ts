// The cases export a close is run with, through the real route: every case open
// at any moment of the period, and which way it belongs to it (opened, closed,
// both, or open throughout); assignee, due date, age, SLA met or missed, snooze,
// resolution and amount at stake; nothing outside the period or of another tenant.
import { parse } from "csv-parse/sync";
import { beforeAll, describe, expect, it } from "vitest";
import { GET as casesExport } from "@/app/api/v1/tenants/[tenant]/exports/cases/route";
import { aTenant, unique, type TestTenant } from "@/dev/testing/builders";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { createApiToken } from "@/lib/auth/api-tokens";
import { ageInDays } from "@/lib/cases/aging";
import { Prisma, prisma } from "@/lib/platform/db";

type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;
const DAY = 86_400_000;

let a: TestTenant;
let token: string;
let alice: string;

async function aCase(
  t: TestTenant,
  reference: string,
  openedAt: string,
  o: { closedAt?: string; amount?: number; currency?: string } = {},
) {
  const rows = await prisma.$queryRaw<{ id: bigint }[]>(Prisma.sql`
    WITH run AS (
      INSERT INTO recon_runs (tenant_id, provider, window_from, window_to, source, actor_type, actor_label, status)
      VALUES (${t.id}::uuid, 'stripe', ${openedAt}::timestamptz, ${openedAt}::timestamptz + interval '1 day', 'CSV', 'SYSTEM', 'tally', 'DONE') RETURNING id),
    d AS (
      INSERT INTO recon_discrepancies (tenant_id, provider, reference, bucket, cause, day, our_amount, our_currency, first_run_id, last_run_id)
      SELECT ${t.id}::uuid, 'stripe', ${reference}, 'OURS_NOT_THEIRS', 'MISSING_AT_PROVIDER', ${openedAt}::date, ${o.amount ?? 1250}, ${o.currency ?? "USD"}, run.id, run.id FROM run RETURNING id)
    INSERT INTO cases (tenant_id, discrepancy_id, kind, status, opened_at, closed_at, resolution)
    SELECT ${t.id}::uuid, d.id, 'OURS_NOT_THEIRS', ${o.closedAt ? "RESOLVED" : "OPEN"}::"CaseStatus", ${openedAt}::timestamptz,
           ${o.closedAt ?? null}::timestamptz, ${o.closedAt ? "matched on re-check by run 1" : null} FROM d
    RETURNING id`);
  return rows[0]!.id;
}

const get = async (t: TestTenant, query: string) => {
  const res = await (casesExport as Handler)(
    new Request(`http://tally.test/api/v1/x?${query}`, { headers: { authorization: `Bearer ${token}` } }),
    { params: Promise.resolve({ tenant: t.slug }) },
  );
  expect(res.status).toBe(200);
  return parse(await res.text(), { columns: true }) as Record<string, string>[];
};

beforeAll(async () => {
  a = await aTenant();
  const r = await createApiToken({ tenant: a.slug, role: "accountant" }, SYSTEM_ACTOR);
  if (!r.ok) throw new Error(r.message);
  token = r.value.token;
  const u = await prisma.user.create({ data: { email: `${unique("alice")}@export.test`, role: "accountant" } });
  await prisma.tenantMember.create({ data: { userId: u.id, tenantId: a.id } });
  alice = u.email;
  const carried = await aCase(a, "pi_carried", "2026-10-20T09:00:00Z", { amount: 4200 });
  await prisma.case.update({
    where: { id: carried },
    data: { assigneeId: u.id, snoozedUntil: new Date(Date.now() + 5 * DAY), snoozeReason: "waiting for Stripe" },
  });
  await aCase(a, "pi_opened_and_closed", "2026-11-03T09:00:00Z", { closedAt: "2026-11-05T09:00:00Z" });
  await aCase(a, "pi_closed_late", "2026-10-30T09:00:00Z", { closedAt: "2026-11-10T09:00:00Z", amount: -700 });
  await aCase(a, "pi_opened", "2026-11-20T09:00:00Z", { amount: 1000, currency: "JPY" });
  await aCase(a, "pi_after", "2026-12-01T00:00:00Z");
  await aCase(a, "pi_closed_before", "2026-10-01T09:00:00Z", { closedAt: "2026-10-31T23:59:59.999Z" });
  await aCase(await aTenant(), "pi_other_tenant", "2026-11-03T09:00:00Z");
});

describe("the cases export for a period", () => {
  it("has every case open at any moment of the period, says how it belongs to it, with assignee, due date, age, SLA, snooze and stake", async () => {
    const rows = await get(a, "from=2026-11-01&to=2026-11-30");
    const now = new Date();
    expect(rows.map((r) => r.reference)).toEqual(["pi_carried", "pi_opened_and_closed", "pi_closed_late", "pi_opened"]);
    const by = Object.fromEntries(rows.map((r) => [r.reference, r]));
    expect(by.pi_carried).toMatchObject({
      kind: "OURS_NOT_THEIRS",
      status: "OPEN",
      in_period: "open_throughout",
      assignee: alice,
      opened_at: "2026-10-20T09:00:00.000Z",
      // Due five days after opening (the default SLA of ours-not-theirs), long past: overdue.
      due_at: "2026-10-25T09:00:00.000Z",
      closed_at: "",
      age_days: String(ageInDays(new Date("2026-10-20T09:00:00Z"), now)),
      age_bucket: "31+",
      sla: "overdue",
      snooze_reason: "waiting for Stripe",
      stake_minor: "4200",
      stake_currency: "USD",
    });
    expect(by.pi_carried!.snoozed_until).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(by.pi_opened_and_closed).toMatchObject({
      in_period: "opened_and_closed",
      status: "RESOLVED",
      assignee: "",
      age_days: "2",
      age_bucket: "",
      sla: "met",
      resolution: "matched on re-check by run 1",
    });
    // Opened before the period, closed in it after its due date; a refund's stake is its size.
    expect(by.pi_closed_late).toMatchObject({
      in_period: "closed",
      age_days: "11",
      sla: "missed",
      stake_minor: "700",
      stake_currency: "USD",
    });
    expect(by.pi_opened).toMatchObject({ in_period: "opened", stake_minor: "1000", stake_currency: "JPY" });
  });

  it("a case closed before the period and one opened after it are in other periods", async () => {
    expect((await get(a, "from=2026-10-01&to=2026-10-31")).map((r) => r.reference)).toEqual([
      "pi_carried",
      "pi_closed_late",
      "pi_closed_before",
    ]);
    expect((await get(a, "from=2026-12-01&to=2026-12-01")).map((r) => [r.reference, r.in_period])).toEqual([
      ["pi_carried", "open_throughout"],
      ["pi_opened", "open_throughout"],
      ["pi_after", "opened"],
    ]);
  });
});
