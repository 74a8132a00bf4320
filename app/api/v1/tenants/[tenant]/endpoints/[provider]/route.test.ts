// The endpoint's matching rules as an admin changes them over HTTP: the real route
// handler with a browser's session (cookie, CSRF token, own origin), the next
// reconciliation run matching by what was saved, the audit row with every value
// before and after, and each refusal a 403 or a 400 that names what is wrong,
// with nothing changed.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PATCH } from "@/app/api/v1/tenants/[tenant]/endpoints/[provider]/route";
import { aStripePayment, aTenant, stripeRequest, unique, type TestTenant } from "@/dev/testing/builders";
import { drain } from "@/dev/testing/drain";
import { reconcileStripeFile } from "@/dev/testing/recon-file";
import { deliver } from "@/dev/testing/route";
import { listEndpoints } from "@/lib/admin/tenants";
import { SESSION_COOKIE } from "@/lib/auth/cookies";
import { createSession } from "@/lib/auth/sessions";
import type { Role } from "@/lib/generated/prisma/enums";
import { prisma } from "@/lib/platform/db";

const HOUR = 3_600_000;
const dir = mkdtempSync(path.join(os.tmpdir(), "tally-match-rules-"));

type Person = { userId: string; email: string };

async function aPerson(tenant: TestTenant, role: Role): Promise<Person> {
  const email = `${unique(role)}@rules.test`;
  const u = await prisma.user.create({ data: { email, role } });
  await prisma.tenantMember.create({ data: { userId: u.id, tenantId: tenant.id } });
  return { userId: u.id, email };
}

/** PATCHes the endpoint as a signed-in person, as the admin page's form does. */
async function patch(tenant: TestTenant, person: Person, body: unknown, provider = "stripe") {
  const { cookieValue, sessionId } = await prisma.$transaction((tx) => createSession(tx, person.userId));
  const { csrfToken } = await prisma.session.findUniqueOrThrow({ where: { id: sessionId } });
  const res = await PATCH(
    new Request(`http://tally.test/api/v1/tenants/${tenant.slug}/endpoints/${provider}`, {
      method: "PATCH",
      headers: {
        cookie: `${SESSION_COOKIE}=${cookieValue}`,
        "x-csrf-token": csrfToken,
        origin: "http://tally.test",
        "content-type": "application/json",
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
    { params: Promise.resolve({ tenant: tenant.slug, provider }) },
  );
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown> & { error?: { code: string; message: string } },
  };
}

const stripeEndpoint = (tenant: TestTenant) =>
  prisma.providerEndpoint.findFirstOrThrow({ where: { tenantId: tenant.id, provider: "stripe" } });
const endpointAudit = (tenant: TestTenant) =>
  prisma.auditLog.findMany({ where: { tenantId: tenant.id, action: "endpoint.update" }, orderBy: { id: "asc" } });

describe("PATCH /api/v1/tenants/{tenant}/endpoints/{provider}", () => {
  it("an admin's saved rules are what the next reconciliation run matches by, and the audit row says who, why, before and after", async () => {
    const tenant = await aTenant();
    const admin = await aPerson(tenant, "admin");
    const saved = await patch(tenant, admin, {
      toleranceSeconds: 600,
      matchRules: { toleranceMinor: "5", dateLagDays: 2, priority: ["amount_date", "reference"] },
      reason: "the acquirer rounds FX to 5 cents",
    });
    expect(saved).toEqual({
      status: 200,
      body: {
        provider: "stripe",
        enabled: true,
        toleranceSeconds: 600,
        matchRules: { toleranceMinor: "5", dateLagDays: 2, priority: ["amount_date", "reference"] },
      },
    });
    const [listed] = (await listEndpoints(tenant.id)).filter((e) => e.provider === "stripe");
    expect(listed).toMatchObject({
      toleranceSeconds: 600,
      matchRules: { toleranceMinor: 5n, dateLagDays: 2, priority: ["amount_date", "reference"] },
    });

    // A payment of 10.00 the provider settled as 10.03: 3 minor units apart, within the saved 5.
    const payment = aStripePayment({ amount: 1000, account: unique("acct_") });
    expect((await deliver(stripeRequest(tenant, payment))).status).toBe(200);
    await drain();
    const window = { from: new Date(Date.now() - 2 * HOUR), to: new Date(Date.now() + 2 * HOUR) };
    const file = path.join(dir, `${unique("report-")}.csv`);
    const at = new Date(window.from.getTime() + HOUR).toISOString();
    writeFileSync(
      file,
      `reference,kind,amount,currency,occurred_at\n${payment.data.object.id},payment,10.03,USD,${at}\n`,
    );
    const run = await reconcileStripeFile(tenant.id, window, file);
    if (!run.ok) throw new Error(run.message);
    expect(run.value).toMatchObject({ matched: 1, withinTolerance: 1, mismatched: 0 });
    expect((await prisma.reconRun.findUniqueOrThrow({ where: { id: run.value.runId } })).rules).toEqual({
      toleranceMinor: "5",
      dateLagDays: 2,
      priority: ["amount_date", "reference"],
    });

    const [entry, ...more] = await endpointAudit(tenant);
    expect(more).toHaveLength(0);
    expect(entry).toMatchObject({
      actorType: "USER",
      actorId: admin.userId,
      actorLabel: admin.email,
      subjectType: "provider_endpoint",
      subjectId: listed!.id,
      reason: "the acquirer rounds FX to 5 cents",
      details: {
        provider: "stripe",
        changed: {
          toleranceSeconds: { from: 300, to: 600 },
          matchToleranceMinor: { from: "0", to: "5" },
          matchDateLagDays: { from: 3, to: 2 },
          matchPriority: { from: ["reference", "amount_date"], to: ["amount_date", "reference"] },
        },
      },
    });
    // Only what changed: enabled was not sent, and the settings were not touched.
    expect(Object.keys((entry!.details as { changed: object }).changed).sort()).toEqual([
      "matchDateLagDays",
      "matchPriority",
      "matchToleranceMinor",
      "toleranceSeconds",
    ]);

    // Saving what is already saved changes nothing and writes no audit row; a later change records the saved value as before.
    expect((await patch(tenant, admin, { matchRules: { toleranceMinor: 5 } })).status).toBe(200);
    expect(await endpointAudit(tenant)).toHaveLength(1);
    const off = await patch(tenant, admin, { enabled: false, matchRules: { dateLagDays: 0 } });
    expect(off.body).toMatchObject({ enabled: false, matchRules: { toleranceMinor: "5", dateLagDays: 0 } });
    const second = (await endpointAudit(tenant))[1]!;
    expect(second).toMatchObject({
      reason: null,
      details: { changed: { enabled: { from: true, to: false }, matchDateLagDays: { from: 2, to: 0 } } },
    });
  });

  it("refuses accountants and ops (403), an unknown provider and a provider without an endpoint (404), changing nothing", async () => {
    const tenant = await aTenant();
    const before = await stripeEndpoint(tenant);
    for (const role of ["accountant", "ops"] as const) {
      const r = await patch(tenant, await aPerson(tenant, role), { matchRules: { toleranceMinor: "5" } });
      expect({ role, status: r.status, code: r.body.error?.code }).toEqual({ role, status: 403, code: "forbidden" });
      expect(r.body.error?.message).toMatch(/admin/);
    }
    const admin = await aPerson(tenant, "admin");
    expect(await patch(tenant, admin, { matchRules: { dateLagDays: 1 } }, "acme")).toMatchObject({
      status: 404,
      body: { error: { code: "unknown_provider", message: 'Unknown provider "acme"' } },
    });
    expect(await patch(tenant, admin, { matchRules: { dateLagDays: 1 } }, "paypal")).toMatchObject({
      status: 404,
      body: { error: { code: "unknown_endpoint", message: expect.stringContaining("has no paypal endpoint") } },
    });
    expect(await stripeEndpoint(tenant)).toEqual(before);
    expect(await endpointAudit(tenant)).toHaveLength(0);
  });

  it("refuses bad values with a 400 naming the field and the value, changing nothing", async () => {
    const tenant = await aTenant();
    const admin = await aPerson(tenant, "admin");
    const before = await stripeEndpoint(tenant);
    const cases: [body: unknown, code: string, message: RegExp][] = [
      [{ matchRules: { toleranceMinor: -1 } }, "invalid_match_rules", /between 0 and 1,000,000 minor units, got -1/],
      [{ matchRules: { toleranceMinor: "-1" } }, "invalid_match_rules", /between 0 and 1,000,000 minor units, got -1/],
      [{ matchRules: { toleranceMinor: "1000001" } }, "invalid_match_rules", /got 1000001/],
      [
        { matchRules: { toleranceMinor: "1.5" } },
        "invalid_input",
        /^matchRules\.toleranceMinor: a whole number of minor units .*got "1\.5"/,
      ],
      [
        { matchRules: { toleranceMinor: 1.5 } },
        "invalid_input",
        /^matchRules\.toleranceMinor: a whole number of minor units .*got 1\.5/,
      ],
      [{ matchRules: { toleranceMinor: "0.05" } }, "invalid_input", /got "0\.05"/],
      [{ matchRules: { toleranceMinor: "1e3" } }, "invalid_input", /got "1e3"/],
      [{ matchRules: { toleranceMinor: 1e21 } }, "invalid_input", /matchRules\.toleranceMinor: .*got 1e\+21/],
      [{ matchRules: { toleranceMinor: "9".repeat(40) } }, "invalid_input", /matchRules\.toleranceMinor/],
      [{ matchRules: { toleranceMinor: null } }, "invalid_input", /got null/],
      [
        { matchRules: { dateLagDays: 61 } },
        "invalid_match_rules",
        /date lag must be a whole number of days, 0 to 60, got 61/,
      ],
      [{ matchRules: { dateLagDays: -1 } }, "invalid_match_rules", /0 to 60, got -1/],
      [{ matchRules: { dateLagDays: 1.5 } }, "invalid_input", /^matchRules\.dateLagDays: a whole number of days/],
      [
        { matchRules: { priority: ["x"] } },
        "invalid_match_rules",
        /"reference" and\/or "amount_date", each once, got \["x"\]/,
      ],
      [{ matchRules: { priority: [] } }, "invalid_match_rules", /each once, got \[\]/],
      [{ matchRules: { priority: ["reference", "reference"] } }, "invalid_match_rules", /each once/],
      [{ matchRules: { priority: "reference" } }, "invalid_input", /^matchRules\.priority:/],
      [{ toleranceSeconds: -1 }, "invalid_tolerance", /0 to 86400, got -1/],
      [
        { toleranceSeconds: 86_401 },
        "invalid_tolerance",
        /signature tolerance must be a whole number of seconds, 0 to 86400, got 86401/,
      ],
      [{ toleranceSeconds: 1.5 }, "invalid_input", /^toleranceSeconds: a whole number of seconds/],
      [{ enabled: "yes" }, "invalid_input", /^enabled:/],
      [{ tolerance: 5 }, "invalid_input", /Unrecognized key: "tolerance"/],
      [{ settings: { apiKey: "sk_live_x" }, note: 1 }, "invalid_input", /Unrecognized keys: "settings", "note"/],
      [{ matchRules: { lag: 2 } }, "invalid_input", /^matchRules: Unrecognized key: "lag"/],
      // A valid change beside a bad one is not half saved.
      [{ enabled: false, matchRules: { toleranceMinor: "5", dateLagDays: 61 } }, "invalid_match_rules", /got 61/],
      ["{not json", "invalid_json", /must be JSON/],
      [[1], "invalid_input", /^body:/],
    ];
    for (const [body, code, message] of cases) {
      const r = await patch(tenant, admin, body);
      expect({ body, status: r.status, code: r.body.error?.code }).toEqual({ body, status: 400, code });
      expect(r.body.error?.message, JSON.stringify(body)).toMatch(message);
    }
    expect(await stripeEndpoint(tenant)).toEqual(before);
    expect(await endpointAudit(tenant)).toHaveLength(0);
  });

  it("six admins saving the date lag at once leave one chain of before and after in the audit log, ending at what is saved", async () => {
    const tenant = await aTenant();
    const admins = await Promise.all(Array.from({ length: 6 }, () => aPerson(tenant, "admin")));
    const results = await Promise.all(
      admins.map((a, i) => patch(tenant, a, { matchRules: { dateLagDays: 10 + i }, reason: `admin ${i}` })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const entries = await endpointAudit(tenant);
    expect(entries).toHaveLength(6);
    // Each save's "before" is the value the previous one (by commit order, which the audit id follows) left.
    let value: unknown = 3;
    for (const e of entries) {
      const lag = (e.details as { changed: { matchDateLagDays: { from: unknown; to: unknown } } }).changed
        .matchDateLagDays;
      expect(lag.from).toBe(value);
      value = lag.to;
    }
    expect((await stripeEndpoint(tenant)).matchDateLagDays).toBe(value);
  });
});
