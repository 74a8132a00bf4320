// The bank routes as Next.js calls them: real handlers, real tokens, real database.
import { beforeAll, describe, expect, it } from "vitest";
import { GET as getLines } from "@/app/api/v1/tenants/[tenant]/bank/statements/[id]/lines/route";
import { GET as getStatement } from "@/app/api/v1/tenants/[tenant]/bank/statements/[id]/route";
import { GET as listStatements, POST as upload } from "@/app/api/v1/tenants/[tenant]/bank/statements/route";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { createApiToken } from "@/lib/auth/api-tokens";
import { aCamt053 } from "@/lib/bank/statement-builders";
import type { Role } from "@/lib/generated/prisma/enums";
import { prisma } from "@/lib/platform/db";
import { aTenant, type TestTenant } from "@/dev/testing/builders";

let tenant: TestTenant;
let other: TestTenant;
const tokens: Partial<Record<Role, string>> = {};

beforeAll(async () => {
  tenant = await aTenant();
  other = await aTenant();
  for (const role of ["accountant", "ops", "admin"] as const) {
    const t = await createApiToken({ tenant: tenant.slug, role }, SYSTEM_ACTOR);
    if (!t.ok) throw new Error(t.message);
    tokens[role] = t.value.token;
  }
});

const base = (slug = tenant.slug) => `http://tally.test/api/v1/tenants/${slug}/bank/statements`;
const ctx = (params: Record<string, string>) => ({ params: Promise.resolve({ tenant: tenant.slug, ...params }) });
const auth = (role: Role) => ({ authorization: `Bearer ${tokens[role]}` });

function post(query: string, body: string | Buffer, role: Role = "accountant") {
  return upload(
    new Request(`${base()}?${query}`, {
      method: "POST",
      headers: { ...auth(role), "content-type": "application/octet-stream" },
      body: new Uint8Array(Buffer.from(body)),
    }),
    ctx({}),
  );
}

const errorOf = async (r: Response) => ((await r.json()) as { error: { code: string; message: string } }).error;

describe("the bank statement routes", () => {
  it("imports a camt.053 upload for an accountant, lists it, and shows each line with its match", async () => {
    const payout = await prisma.payout.create({
      data: {
        tenantId: tenant.id,
        provider: "stripe",
        reference: "po_routeMatch1",
        currency: "EUR",
        ourAmount: 4_200n,
        arrivalDate: new Date("2026-12-02T00:00:00Z"),
      },
    });
    const xml = aCamt053({
      from: "2026-12-01",
      to: "2026-12-03",
      entries: [
        { amount: 4_200n, remittance: ["STRIPE po_routeMatch1"], bookingDate: "2026-12-03" },
        { amount: 999n, remittance: ["someone else"], bookingDate: "2026-12-03" },
        { amount: 10n, direction: "DBIT" },
      ],
    });
    const r = await post("format=camt053&name=december.xml", xml);
    expect(r.status).toBe(201);
    const summary = (await r.json()) as Record<string, unknown>;
    expect(summary).toMatchObject({
      lines: 3,
      credits: 2,
      debits: 1,
      matchedPayouts: 1,
      bytes: Buffer.byteLength(xml),
    });
    const id = String(summary.statementId);

    const list = await listStatements(new Request(base(), { headers: auth("ops") }), ctx({}));
    expect(list.status).toBe(200);
    expect(((await list.json()) as { statements: unknown[] }).statements).toEqual([
      expect.objectContaining({
        id,
        sourceName: "december.xml",
        lines: 3,
        credits: 2,
        debits: 1,
        matched: 1,
        unmatchedCredits: 1,
      }),
    ]);

    const one = await getStatement(new Request(`${base()}/${id}`, { headers: auth("ops") }), ctx({ id }));
    expect(await one.json()).toMatchObject({
      statement: { id },
      runs: [{ provider: "stripe", matched: 1, compared: 1 }],
    });

    const lines = await getLines(new Request(`${base()}/${id}/lines`, { headers: auth("accountant") }), ctx({ id }));
    const page = (await lines.json()) as { lines: Record<string, unknown>[] };
    expect(page.lines).toHaveLength(3);
    expect(page.lines[0]).toMatchObject({
      rowNo: 1,
      amount: "4200",
      matchRule: "reference",
      payouts: [{ id: String(payout.id), reference: "po_routeMatch1", amount: "4200", provider: "stripe" }],
    });
    const unmatched = await getLines(
      new Request(`${base()}/${id}/lines?filter=unmatched`, { headers: auth("ops") }),
      ctx({ id }),
    );
    expect(((await unmatched.json()) as { lines: { rowNo: number }[] }).lines.map((l) => l.rowNo)).toEqual([2]);
  });

  it("lets ops read but not import, and hides other tenants' statements", async () => {
    const r = await post("format=camt053", aCamt053({ entries: [{ amount: 1n }] }), "ops");
    expect(r.status).toBe(403);
    expect((await errorOf(r)).message).toMatch(/needs accountant/);
    expect(
      await prisma.bankStatement.count({ where: { tenantId: tenant.id, lines: 1, sourceName: "bank-statement.xml" } }),
    ).toBe(0);
    const theirs = await prisma.bankStatement.create({
      data: {
        tenantId: other.id,
        format: "camt053",
        account: "X",
        sha256: "f".repeat(64),
        actorType: "SYSTEM",
        actorLabel: "t",
      },
    });
    const id = String(theirs.id);
    expect((await getStatement(new Request(`${base()}/${id}`, { headers: auth("admin") }), ctx({ id }))).status).toBe(
      404,
    );
    expect((await getLines(new Request(`${base()}/${id}/lines`, { headers: auth("admin") }), ctx({ id }))).status).toBe(
      404,
    );
    const bad = await getLines(new Request(`${base()}/abc/lines`, { headers: auth("admin") }), ctx({ id: "abc" }));
    expect(bad.status).toBe(400);
  });

  it("answers a bad upload with 4xx and its reason, never 500, storing nothing", async () => {
    const before = await prisma.bankStatement.count({ where: { tenantId: tenant.id } });
    const cases: [string, string | Buffer, number, string, RegExp][] = [
      ["format=camt053", "date;amount\n2026-12-01;10,00\n", 422, "malformed_statement", /not well-formed XML/],
      [
        "format=camt053",
        `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x "y">]><Document/>`,
        422,
        "malformed_statement",
        /a DOCTYPE is not allowed/,
      ],
      ["format=camt053", aCamt053({ entries: [{ amount: "1.001" }] }), 422, "malformed_statement", /entry 1/],
      ["format=csv", "a;b\n", 400, "invalid_layout", /needs its layout/],
      ["format=csv&layout=%7Bnot%20json", "a;b\n", 400, "invalid_input", /layout: must be the CSV layout as JSON/],
      ["format=csv&layout=%7B%22account%22%3A%22x%22%7D", "a;b\n", 400, "invalid_layout", /dateColumn/],
      ["format=ofx", "x", 400, "invalid_input", /format/],
      ["format=camt053", "", 400, "empty", /empty/],
    ];
    for (const [query, body, status, code, message] of cases) {
      const r = await post(query, body);
      const error = await errorOf(r);
      expect([query, r.status, error.code]).toEqual([query, status, code]);
      expect(error.message).toMatch(message);
    }
    expect(await prisma.bankStatement.count({ where: { tenantId: tenant.id } })).toBe(before);
  });

  it("answers the same file twice with 409 already_imported", async () => {
    const xml = aCamt053({ entries: [{ amount: 31_415n }], from: "2026-11-01", to: "2026-11-02" });
    expect((await post("format=camt053&name=once.xml", xml)).status).toBe(201);
    const again = await post("format=camt053&name=twice.xml", xml);
    expect(again.status).toBe(409);
    expect(await errorOf(again)).toMatchObject({
      code: "already_imported",
      message: expect.stringMatching(/once.xml/),
    });
  });
});
