// Cases an accountant runs a close with: due dates by the SLA of the case's kind
// (set by the database, whoever opens the case), aging buckets at their exact
// boundaries, assignment to members who work cases, snoozes that hide a case
// until their date and then let it back by themselves, the audit entry of every
// change, and the JSON API's refusals, against the real route handlers.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { POST as assignRoute } from "@/app/api/v1/tenants/[tenant]/cases/[id]/assignment/route";
import { DELETE as unsnoozeRoute, POST as snoozeRoute } from "@/app/api/v1/tenants/[tenant]/cases/[id]/snooze/route";
import { GET as listRoute } from "@/app/api/v1/tenants/[tenant]/cases/route";
import { aStripePayment, aTenant, stripeRequest, unique, type TestTenant } from "@/dev/testing/builders";
import { drain, drainAll } from "@/dev/testing/drain";
import { reconcileStripeFile } from "@/dev/testing/recon-file";
import { deliver } from "@/dev/testing/route";
import { assignCase } from "@/lib/cases/assign";
import { agingCounts, listCases } from "@/lib/cases/list";
import { DEFAULT_CASE_SLA_DAYS } from "@/lib/cases/sla-days";
import { caseSla, syncCaseSla } from "@/lib/cases/sla";
import { snoozeCase, unsnoozeCase } from "@/lib/cases/snooze";
import type { Person } from "@/lib/cases/cases";
import { createSession } from "@/lib/auth/sessions";
import { SESSION_COOKIE } from "@/lib/auth/cookies";
import { config, resetConfigForTests } from "@/lib/platform/config";
import { Prisma, prisma } from "@/lib/platform/db";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const dir = mkdtempSync(path.join(os.tmpdir(), "tally-close-"));

async function aPerson(
  tenant: TestTenant | null,
  role: "accountant" | "ops" | "admin" = "accountant",
): Promise<Person> {
  const email = `${unique("p")}@close.test`;
  const u = await prisma.user.create({ data: { email, role } });
  if (tenant) await prisma.tenantMember.create({ data: { userId: u.id, tenantId: tenant.id } });
  return { userId: u.id, label: email };
}

/** A case as the raw-SQL inserters open one (reconciliation, payouts, bank): no due date given. */
async function aCaseBySql(
  tenant: TestTenant,
  o: { kind?: string; openedAt?: Date; status?: string; closedAt?: Date | null; reference?: string } = {},
): Promise<bigint> {
  // Every kind but a conflict is about a discrepancy of the bucket of the same name.
  const kind = o.kind ?? "OURS_NOT_THEIRS";
  const rows = await prisma.$queryRaw<{ id: bigint }[]>(Prisma.sql`
    WITH run AS (
      INSERT INTO recon_runs (tenant_id, provider, window_from, window_to, source, actor_type, actor_label, status)
      VALUES (${tenant.id}::uuid, 'stripe', now() - interval '1 day', now(), 'CSV', 'SYSTEM', 'tally', 'DONE') RETURNING id),
    d AS (
      INSERT INTO recon_discrepancies (tenant_id, provider, reference, bucket, cause, day, our_amount, our_currency, first_run_id, last_run_id)
      SELECT ${tenant.id}::uuid, 'stripe', ${o.reference ?? unique("pi_sql_")}, ${kind}::"DiscrepancyBucket", 'MISSING_AT_PROVIDER', current_date, 1250, 'USD', run.id, run.id FROM run RETURNING id)
    INSERT INTO cases (tenant_id, discrepancy_id, kind, status, opened_at, closed_at)
    SELECT ${tenant.id}::uuid, d.id, ${kind}::"CaseKind", ${o.status ?? "OPEN"}::"CaseStatus", ${o.openedAt ?? new Date()}, ${o.closedAt ?? null}::timestamptz FROM d
    RETURNING id`);
  return rows[0]!.id;
}

/** A posted Stripe payment and the case reconciliation opened for it (ours-not-theirs, or a mismatch). */
async function aReconciledCase(tenant: TestTenant, o: { amount: bigint; theirs?: string }) {
  const payment = aStripePayment({ amount: o.amount, account: unique("acct_") });
  expect((await deliver(stripeRequest(tenant, payment))).status).toBe(200);
  await drain();
  const reference = payment.data.object.id;
  const window = { from: new Date(Date.now() - 2 * HOUR), to: new Date(Date.now() + 2 * HOUR) };
  const file = path.join(dir, `${unique("report-")}.csv`);
  const at = new Date(window.from.getTime() + HOUR).toISOString();
  writeFileSync(
    file,
    `reference,kind,amount,currency,occurred_at\n${o.theirs ? `${reference},payment,${o.theirs},USD,${at}\n` : ""}`,
  );
  const r = await reconcileStripeFile(tenant.id, window, file);
  if (!r.ok) throw new Error(r.message);
  return prisma.case.findFirstOrThrow({ where: { tenantId: tenant.id, discrepancy: { reference } } });
}

const dueAfterDays = (c: { openedAt: Date; dueAt: Date | null }) => (c.dueAt!.getTime() - c.openedAt.getTime()) / DAY;

afterAll(async () => {
  delete process.env.TALLY_CASE_SLA_DAYS;
  resetConfigForTests();
  await syncCaseSla();
});

describe("due dates by the SLA of the case's kind", () => {
  it("every case is due its kind's configured days after it opened, whoever opened it: a reconciliation run, a claim conflict, or raw SQL for payouts and the bank", async () => {
    process.env.TALLY_CASE_SLA_DAYS = "MISMATCH=7,OURS_NOT_THEIRS=4,CONFLICT=1,PAYOUT_RESIDUAL=9,BANK_UNMATCHED=11";
    resetConfigForTests();
    expect((await syncCaseSla()).sort()).toEqual(
      ["BANK_UNMATCHED", "CONFLICT", "MISMATCH", "OURS_NOT_THEIRS", "PAYOUT_RESIDUAL"].sort(),
    );
    expect(await caseSla()).toEqual({
      MISMATCH: 7,
      OURS_NOT_THEIRS: 4,
      CONFLICT: 1,
      PAYOUT_RESIDUAL: 9,
      BANK_UNMATCHED: 11,
    });
    const tenant = await aTenant();

    const ours = await aReconciledCase(tenant, { amount: 4200n });
    const mismatch = await aReconciledCase(tenant, { amount: 5000n, theirs: "45.00" });
    expect([ours.kind, mismatch.kind]).toEqual(["OURS_NOT_THEIRS", "MISMATCH"]);

    // A claim conflict: the same payment delivered again with other money.
    const payment = aStripePayment({ amount: 100n, account: "acct_conflict" });
    expect((await deliver(stripeRequest(tenant, payment))).status).toBe(200);
    await drain();
    const retry = {
      ...payment,
      id: unique("evt_"),
      data: { object: { ...payment.data.object, amount_received: 120 } },
    };
    expect((await deliver(stripeRequest(tenant, retry))).status).toBe(200);
    await drainAll();
    const conflict = await prisma.case.findFirstOrThrow({ where: { tenantId: tenant.id, kind: "CONFLICT" } });

    const residual = await prisma.case.findUniqueOrThrow({
      where: { id: await aCaseBySql(tenant, { kind: "PAYOUT_RESIDUAL" }) },
    });
    const bank = await prisma.case.findUniqueOrThrow({
      where: { id: await aCaseBySql(tenant, { kind: "BANK_UNMATCHED" }) },
    });

    expect([ours, mismatch, conflict, residual, bank].map(dueAfterDays)).toEqual([4, 7, 1, 9, 11]);
  });

  it("a changed SLA applies to cases opened after it; a due date already given does not move", async () => {
    const tenant = await aTenant();
    process.env.TALLY_CASE_SLA_DAYS = "OURS_NOT_THEIRS=4";
    resetConfigForTests();
    await syncCaseSla();
    const before = await aCaseBySql(tenant);
    process.env.TALLY_CASE_SLA_DAYS = "OURS_NOT_THEIRS=10";
    resetConfigForTests();
    // Only the kind whose days changed is rewritten; the others are back at their defaults.
    expect(await syncCaseSla()).toEqual(expect.arrayContaining(["OURS_NOT_THEIRS"]));
    expect(await syncCaseSla()).toEqual([]);
    const after = await aCaseBySql(tenant);
    const b = await prisma.case.findUniqueOrThrow({ where: { id: before } });
    const a = await prisma.case.findUniqueOrThrow({ where: { id: after } });
    expect([dueAfterDays(b), dueAfterDays(a)]).toEqual([4, 10]);
    expect((await caseSla()).MISMATCH).toBe(DEFAULT_CASE_SLA_DAYS.MISMATCH);
  });

  it("the SLA setting refuses unknown kinds, days outside 1..365 and a kind given twice, naming the problem", () => {
    for (const [value, problem] of [
      ["MISMATCH=0", "days must be from 1 to 365"],
      ["MISMATCH=400", "days must be from 1 to 365"],
      ["REFUND=3", '"REFUND" is not a case kind'],
      ["MISMATCH=3,MISMATCH=4", "MISMATCH is given twice"],
      ["MISMATCH:3", "is not KIND=DAYS"],
    ] as const) {
      process.env.TALLY_CASE_SLA_DAYS = value;
      resetConfigForTests();
      expect(() => config()).toThrow(`TALLY_CASE_SLA_DAYS: `);
      expect(() => config()).toThrow(problem);
    }
    delete process.env.TALLY_CASE_SLA_DAYS;
    resetConfigForTests();
    expect(config().TALLY_CASE_SLA_DAYS).toEqual(DEFAULT_CASE_SLA_DAYS);
  });

  it("overdue is open and past its due date: not at the due instant itself, and never once resolved", async () => {
    const tenant = await aTenant();
    await syncCaseSla(prisma, DEFAULT_CASE_SLA_DAYS);
    const opened = new Date(Date.now() - 20 * DAY);
    const open = await aCaseBySql(tenant, { openedAt: opened });
    await aCaseBySql(tenant, { openedAt: opened, status: "RESOLVED", closedAt: new Date() });
    const due = (await prisma.case.findUniqueOrThrow({ where: { id: open } })).dueAt!;
    expect(due.getTime() - opened.getTime()).toBe(5 * DAY);

    const atDue = await listCases({ tenantId: tenant.id, state: "all", now: due });
    expect(atDue.cases.map((c) => c.overdue)).toEqual([false, false]);
    const after = new Date(due.getTime() + 1);
    const page = await listCases({ tenantId: tenant.id, state: "all", now: after });
    expect(page.cases.map((c) => [c.id, c.overdue])).toEqual([
      [open + 1n, false],
      [open, true],
    ]);
    expect(
      (await listCases({ tenantId: tenant.id, state: "all", overdue: true, now: after })).cases.map((c) => c.id),
    ).toEqual([open]);
    expect((await agingCounts({ tenantId: tenant.id, now: after })).overdue).toBe(1);
    expect((await agingCounts({ tenantId: tenant.id, now: due })).overdue).toBe(0);
  });
});

describe("aging buckets", () => {
  it("a case is 0–1 days old up to just under 2 days, 2–7 from exactly 2 to 7, 8–30 from exactly 8 to 30, and over 30 from exactly 31; on the rows, the filter and the counts", async () => {
    const tenant = await aTenant();
    const now = new Date("2026-12-07T12:00:00.000Z");
    const ages: [string, number][] = [
      ["just opened", 0],
      ["exactly 1 day", DAY],
      ["just under 2 days", 2 * DAY - 1],
      ["exactly 2 days", 2 * DAY],
      ["exactly 7 days", 7 * DAY],
      ["just under 8 days", 8 * DAY - 1],
      ["exactly 8 days", 8 * DAY],
      ["exactly 30 days", 30 * DAY],
      ["just under 31 days", 31 * DAY - 1],
      ["exactly 31 days", 31 * DAY],
      ["a year", 365 * DAY],
    ];
    const ids = new Map<bigint, string>();
    for (const [name, age] of ages)
      ids.set(
        await aCaseBySql(tenant, { openedAt: new Date(now.getTime() - age), reference: `pi_age_${ids.size}` }),
        name,
      );
    // A resolved case has no age bucket and is never counted.
    await aCaseBySql(tenant, { openedAt: new Date(now.getTime() - 3 * DAY), status: "RESOLVED", closedAt: now });

    const rows = (await listCases({ tenantId: tenant.id, now })).cases;
    const bucketOf = Object.fromEntries(rows.map((c) => [ids.get(c.id)!, c.ageBucket]));
    expect(bucketOf).toEqual({
      "just opened": "0-1",
      "exactly 1 day": "0-1",
      "just under 2 days": "0-1",
      "exactly 2 days": "2-7",
      "exactly 7 days": "2-7",
      "just under 8 days": "2-7",
      "exactly 8 days": "8-30",
      "exactly 30 days": "8-30",
      "just under 31 days": "8-30",
      "exactly 31 days": "31+",
      "a year": "31+",
    });
    expect(Object.fromEntries(rows.map((c) => [ids.get(c.id)!, c.ageDays]))).toMatchObject({
      "exactly 1 day": 1,
      "just under 2 days": 1,
      "exactly 31 days": 31,
    });
    // The filter lists exactly the rows that show the bucket, and the counts say how many.
    const counts = await agingCounts({ tenantId: tenant.id, now });
    for (const bucket of ["0-1", "2-7", "8-30", "31+"] as const) {
      const listed = (await listCases({ tenantId: tenant.id, age: bucket, now })).cases.map((c) => ids.get(c.id)!);
      expect(listed.sort()).toEqual(
        Object.entries(bucketOf)
          .filter(([, b]) => b === bucket)
          .map(([n]) => n)
          .sort(),
      );
      expect(counts.buckets[bucket]).toBe(listed.length);
    }
    expect(counts).toMatchObject({ buckets: { "0-1": 3, "2-7": 3, "8-30": 3, "31+": 2 }, open: 11 });
  });
});

describe("assignee", () => {
  it("a case goes to a member who works cases, shows under mine and not under unassigned, and back to nobody; each change audited with who, why, from and to", async () => {
    const tenant = await aTenant();
    const [alice, bruno] = [await aPerson(tenant), await aPerson(tenant, "admin")];
    const caseId = await aCaseBySql(tenant);
    const other = await aCaseBySql(tenant);
    const mine = () =>
      listCases({ tenantId: tenant.id, assignee: { userId: alice.userId } }).then((p) => p.cases.map((c) => c.id));
    const unassigned = () =>
      listCases({ tenantId: tenant.id, assignee: "unassigned" }).then((p) => p.cases.map((c) => c.id));
    expect(await unassigned()).toEqual([other, caseId]);

    expect(
      await assignCase(tenant.id, caseId, bruno, { assigneeId: alice.userId, reason: "Alice owns Stripe" }),
    ).toEqual({
      ok: true,
      value: { assigneeId: alice.userId, assigneeLabel: alice.label },
    });
    expect(await mine()).toEqual([caseId]);
    expect(await unassigned()).toEqual([other]);
    expect((await listCases({ tenantId: tenant.id })).cases.find((c) => c.id === caseId)!.assignee).toMatchObject({
      email: alice.label,
    });
    // An admin member may be given a case too.
    expect(
      await assignCase(tenant.id, caseId, alice, { assigneeId: bruno.userId, reason: "hand over to Bruno" }),
    ).toMatchObject({ ok: true });
    expect(await assignCase(tenant.id, caseId, alice, { assigneeId: bruno.userId, reason: "again" })).toMatchObject({
      ok: false,
      reason: "nothing_to_do",
    });
    expect(await assignCase(tenant.id, caseId, alice, { assigneeId: null, reason: "nobody for now" })).toMatchObject({
      ok: true,
      value: { assigneeId: null },
    });
    expect(await unassigned()).toEqual([other, caseId]);

    const audit = await prisma.auditLog.findMany({
      where: { tenantId: tenant.id, subjectType: "case", subjectId: String(caseId) },
      orderBy: { id: "asc" },
    });
    expect(audit.map((a) => [a.action, a.actorLabel, a.reason, a.details])).toEqual([
      ["case.assign", bruno.label, "Alice owns Stripe", { from: null, to: alice.label }],
      ["case.assign", alice.label, "hand over to Bruno", { from: alice.label, to: bruno.label }],
      ["case.unassign", alice.label, "nobody for now", { from: bruno.label, to: null }],
    ]);
  });

  it("refuses an ops member, a disabled one, someone outside the tenant, a resolved case and no reason, changing nothing", async () => {
    const tenant = await aTenant();
    const alice = await aPerson(tenant);
    const ops = await aPerson(tenant, "ops");
    const outsider = await aPerson(null);
    const disabled = await aPerson(tenant);
    await prisma.user.update({ where: { id: disabled.userId }, data: { disabledAt: new Date() } });
    const caseId = await aCaseBySql(tenant);
    const resolved = await aCaseBySql(tenant, { status: "RESOLVED", closedAt: new Date() });
    for (const [who, message] of [
      [ops, "cases are worked by accountants (or admins)"],
      [disabled, "is disabled"],
      [outsider, `No member ${outsider.userId} in this tenant`],
    ] as const)
      expect(await assignCase(tenant.id, caseId, alice, { assigneeId: who.userId, reason: "try it" })).toEqual({
        ok: false,
        reason: "invalid_assignee",
        message: expect.stringContaining(message),
      });
    expect(await assignCase(tenant.id, resolved, alice, { assigneeId: alice.userId, reason: "late" })).toMatchObject({
      ok: false,
      reason: "not_open",
    });
    expect(await assignCase(tenant.id, caseId, alice, { assigneeId: alice.userId, reason: " " })).toMatchObject({
      ok: false,
      reason: "reason_required",
    });
    const other = await aTenant();
    expect(await assignCase(other.id, caseId, alice, { assigneeId: alice.userId, reason: "probe" })).toMatchObject({
      ok: false,
      reason: "not_found",
    });
    expect((await prisma.case.findUniqueOrThrow({ where: { id: caseId } })).assigneeId).toBeNull();
    expect(await prisma.auditLog.count({ where: { tenantId: tenant.id, action: { startsWith: "case." } } })).toBe(0);
  });
});

describe("snooze", () => {
  it("hides a case from the open list until its date, shows it under snoozed meanwhile, and lets it back by itself once the date has passed; unsnooze brings it back at once; both audited", async () => {
    const tenant = await aTenant();
    const alice = await aPerson(tenant);
    const caseId = await aCaseBySql(tenant);
    const t0 = new Date();
    const until = new Date(t0.getTime() + 3 * DAY);
    const open = (now: Date) => listCases({ tenantId: tenant.id, now }).then((p) => p.cases.map((c) => c.id));
    const snoozed = (now: Date) =>
      listCases({ tenantId: tenant.id, state: "snoozed", now }).then((p) => p.cases.map((c) => c.id));

    expect(await snoozeCase(tenant.id, caseId, alice, { until, reason: "Stripe support answers Monday" }, t0)).toEqual({
      ok: true,
      value: { snoozedUntil: until },
    });
    expect(await open(t0)).toEqual([]);
    expect(await snoozed(t0)).toEqual([caseId]);
    expect(await agingCounts({ tenantId: tenant.id, now: t0 })).toMatchObject({ open: 0, snoozed: 1 });
    // A millisecond before its date it is still snoozed; at the date it is back, with no job run.
    expect(await open(new Date(until.getTime() - 1))).toEqual([]);
    expect(await open(until)).toEqual([caseId]);
    expect(await snoozed(until)).toEqual([]);
    expect((await listCases({ tenantId: tenant.id, now: until })).cases[0]).toMatchObject({
      snoozed: false,
      snoozedUntil: until,
    });

    const later = new Date(t0.getTime() + 10 * DAY);
    expect(await snoozeCase(tenant.id, caseId, alice, { until: later, reason: "month end" }, t0)).toMatchObject({
      ok: true,
    });
    expect(await unsnoozeCase(tenant.id, caseId, alice, { reason: "Stripe answered early" }, t0)).toMatchObject({
      ok: true,
    });
    expect(await open(t0)).toEqual([caseId]);
    expect(await unsnoozeCase(tenant.id, caseId, alice, { reason: "again" }, t0)).toMatchObject({
      ok: false,
      reason: "nothing_to_do",
    });
    expect(await prisma.case.findUniqueOrThrow({ where: { id: caseId } })).toMatchObject({
      snoozedUntil: null,
      snoozeReason: null,
    });
    const audit = await prisma.auditLog.findMany({
      where: { tenantId: tenant.id, subjectId: String(caseId) },
      orderBy: { id: "asc" },
    });
    expect(audit.map((a) => [a.action, a.actorLabel, a.reason, a.details])).toEqual([
      ["case.snooze", alice.label, "Stripe support answers Monday", { until: until.toISOString(), previously: null }],
      // The second snooze replaced one still running: the audit says which.
      ["case.snooze", alice.label, "month end", { until: later.toISOString(), previously: until.toISOString() }],
      ["case.unsnooze", alice.label, "Stripe answered early", { wasUntil: later.toISOString() }],
    ]);
  });

  it("refuses a date not in the future or more than 90 days ahead, a case waiting for approval or resolved, and no reason; a proposal on a snoozed case shows it again", async () => {
    const tenant = await aTenant();
    const alice = await aPerson(tenant);
    const caseId = await aCaseBySql(tenant);
    const now = new Date();
    for (const until of [now, new Date(now.getTime() - DAY), new Date(now.getTime() + 90 * DAY + 1)])
      expect(await snoozeCase(tenant.id, caseId, alice, { until, reason: "wait" }, now)).toMatchObject({
        ok: false,
        reason: "invalid_snooze",
      });
    expect(
      await snoozeCase(tenant.id, caseId, alice, { until: new Date(now.getTime() + 90 * DAY), reason: "at most" }, now),
    ).toMatchObject({ ok: true });
    expect(
      await snoozeCase(tenant.id, caseId, alice, { until: new Date(now.getTime() + DAY), reason: "" }, now),
    ).toMatchObject({
      ok: false,
      reason: "reason_required",
    });
    const resolved = await aCaseBySql(tenant, { status: "RESOLVED", closedAt: now });
    expect(
      await snoozeCase(tenant.id, resolved, alice, { until: new Date(now.getTime() + DAY), reason: "late" }, now),
    ).toMatchObject({ ok: false, reason: "not_open" });
    // A case waiting for approval: its checker has to see it, snoozed or not.
    await prisma.$transaction(async (tx) => {
      await tx.caseProposal.create({
        data: {
          tenantId: tenant.id,
          caseId,
          resolution: "ESCALATE",
          reason: "ask Stripe",
          proposedById: alice.userId,
          proposedByLabel: alice.label,
          amount: 1250n,
          currency: "USD",
          requiredApprovals: 1,
        },
      });
      await tx.case.update({ where: { id: caseId }, data: { status: "PROPOSED" } });
    });
    expect((await listCases({ tenantId: tenant.id, now })).cases.map((c) => c.id)).toEqual([caseId]);
    expect(
      await snoozeCase(tenant.id, caseId, alice, { until: new Date(now.getTime() + DAY), reason: "hide it" }, now),
    ).toMatchObject({ ok: false, reason: "not_open", message: expect.stringContaining("hide it from its checker") });
  });
});

describe("the JSON API", () => {
  /** A signed-in person's request to a route handler, as the browser sends it (cookie, CSRF token, own origin). */
  async function asPerson(person: Person, method: string, body?: unknown) {
    const { cookieValue } = await prisma.$transaction((tx) => createSession(tx, person.userId));
    const { csrfToken } = await prisma.session.findFirstOrThrow({
      where: { userId: person.userId },
      orderBy: { createdAt: "desc" },
    });
    return (url: string) =>
      new Request(`http://tally.test${url}`, {
        method,
        headers: {
          cookie: `${SESSION_COOKIE}=${cookieValue}`,
          "x-csrf-token": csrfToken,
          origin: "http://tally.test",
          "content-type": "application/json",
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
  }
  type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;
  const call = async (h: unknown, request: Request, params: Record<string, string>) => {
    const res = await (h as Handler)(request, { params: Promise.resolve(params) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("assigns, snoozes and unsnoozes for accountants; refuses ops (403), bad input (400 naming the field) and a non-member (422); lists mine with counts", async () => {
    const tenant = await aTenant();
    const alice = await aPerson(tenant);
    const ops = await aPerson(tenant, "ops");
    const caseId = String(await aCaseBySql(tenant));
    const params = { tenant: tenant.slug, id: caseId };
    const url = `/api/v1/tenants/${tenant.slug}/cases/${caseId}`;

    const assigned = await call(
      assignRoute,
      (await asPerson(alice, "POST", { assigneeId: alice.userId, reason: "mine now" }))(`${url}/assignment`),
      params,
    );
    expect(assigned).toEqual({ status: 200, body: { assigneeId: alice.userId, assigneeLabel: alice.label } });
    const listed = await call(
      listRoute,
      (await asPerson(alice, "GET"))(`/api/v1/tenants/${tenant.slug}/cases?assignee=mine`),
      { tenant: tenant.slug },
    );
    expect(listed.status).toBe(200);
    expect((listed.body.cases as { id: string; ageBucket: string }[]).map((c) => [c.id, c.ageBucket])).toEqual([
      [caseId, "0-1"],
    ]);
    expect(listed.body.counts).toMatchObject({ buckets: { "0-1": 1, "2-7": 0 }, overdue: 0, open: 1 });
    expect(
      (
        await call(listRoute, (await asPerson(alice, "GET"))(`/api/v1/tenants/${tenant.slug}/cases?age=9-99`), {
          tenant: tenant.slug,
        })
      ).status,
    ).toBe(400);

    const nonMember = await aPerson(null);
    expect(
      await call(
        assignRoute,
        (await asPerson(alice, "POST", { assigneeId: nonMember.userId, reason: "try" }))(`${url}/assignment`),
        params,
      ),
    ).toMatchObject({ status: 422, body: { error: { code: "invalid_assignee" } } });
    expect(
      await call(
        assignRoute,
        (await asPerson(alice, "POST", { assigneeId: "alice", reason: "try" }))(`${url}/assignment`),
        params,
      ),
    ).toMatchObject({
      status: 400,
      body: { error: { code: "invalid_input", message: expect.stringContaining("assigneeId") } },
    });

    const until = new Date(Date.now() + 2 * DAY).toISOString().slice(0, 10);
    expect(
      await call(snoozeRoute, (await asPerson(ops, "POST", { until, reason: "ops try" }))(`${url}/snooze`), params),
    ).toMatchObject({ status: 403 });
    expect(
      await call(
        snoozeRoute,
        (await asPerson(alice, "POST", { until: "next week", reason: "soon" }))(`${url}/snooze`),
        params,
      ),
    ).toMatchObject({ status: 400, body: { error: { message: expect.stringContaining("until") } } });
    expect(
      await call(
        snoozeRoute,
        (await asPerson(alice, "POST", { until: "2020-01-01", reason: "past" }))(`${url}/snooze`),
        params,
      ),
    ).toMatchObject({ status: 400, body: { error: { code: "invalid_snooze" } } });
    expect(
      await call(
        snoozeRoute,
        (await asPerson(alice, "POST", { until, reason: "after the weekend" }))(`${url}/snooze`),
        params,
      ),
    ).toEqual({ status: 200, body: { snoozedUntil: `${until}T00:00:00.000Z` } });
    expect(
      await call(unsnoozeRoute, (await asPerson(alice, "DELETE", { reason: "needed now" }))(`${url}/snooze`), params),
    ).toEqual({ status: 200, body: { snoozedUntil: null } });
    expect(
      (
        await prisma.auditLog.findMany({
          where: { tenantId: tenant.id, action: { startsWith: "case." } },
          orderBy: { id: "asc" },
        })
      ).map((a) => a.action),
    ).toEqual(["case.assign", "case.snooze", "case.unsnooze"]);
  });
});
