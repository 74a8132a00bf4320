// Four eyes on what an uploaded report posts: through the real upload route, the real
// approval route and the worker. An uploaded file's fees and adjustments wait for a second
// person; the uploader cannot approve them; two approvals sent at once post them once; a
// rejection posts nothing; a run against the provider's API still posts at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  GET as getApproval,
  POST as decide,
} from "@/app/api/v1/tenants/[tenant]/reconciliation/runs/[id]/approval/route";
import { POST as startRun } from "@/app/api/v1/tenants/[tenant]/reconciliation/runs/route";
import { POST as upload } from "@/app/api/v1/tenants/[tenant]/reconciliation/uploads/route";
import { generateDay } from "@/dev/simulator/day";
import { startSimulator, type Simulator } from "@/dev/simulator/server";
import { aStripePayment, aTenant, stripeRequest, type TestTenant, unique } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";
import { SESSION_COOKIE } from "@/lib/auth/cookies";
import { createSession } from "@/lib/auth/sessions";
import type { Role } from "@/lib/generated/prisma/enums";
import { Prisma, prisma } from "@/lib/platform/db";

const HEADER =
  "balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,payment_intent_id,charge_id,automatic_payout_id";
const at = (unix: number) => new Date(unix * 1000).toISOString().replace("T", " ").slice(0, 19);
const now = Math.floor(Date.now() / 1000) - 3600;

type Person = { userId: string; email: string };
type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

let tenant: TestTenant;
let alice: Person;
let bob: Person;
let carol: Person;
let olga: Person;

async function aPerson(role: Role): Promise<Person> {
  const email = `${unique(role)}@four-eyes.test`;
  const u = await prisma.user.create({ data: { email, role } });
  await prisma.tenantMember.create({ data: { userId: u.id, tenantId: tenant.id } });
  return { userId: u.id, email };
}

/** A signed-in person's request to a route handler, as the browser sends it (cookie, CSRF token, own origin). */
async function call(h: unknown, who: Person, url: string, params: Record<string, string>, init: RequestInit = {}) {
  const { cookieValue } = await prisma.$transaction((tx) => createSession(tx, who.userId));
  const { csrfToken } = await prisma.session.findFirstOrThrow({
    where: { userId: who.userId },
    orderBy: { createdAt: "desc" },
  });
  const res = await (h as Handler)(
    new Request(`http://tally.test/api/v1/tenants/${tenant.slug}${url}`, {
      ...init,
      headers: {
        cookie: `${SESSION_COOKIE}=${cookieValue}`,
        "x-csrf-token": csrfToken,
        origin: "http://tally.test",
        ...init.headers,
      },
    }),
    { params: Promise.resolve({ tenant: tenant.slug, ...params }) },
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { error?: { message: string } } };
}

const uploadAs = (who: Person, csv: string) =>
  call(
    upload,
    who,
    `/reconciliation/uploads?provider=stripe&name=${unique("report-")}.csv`,
    {},
    {
      method: "POST",
      headers: { "content-type": "text/csv" },
      body: csv,
    },
  );

const decideAs = (who: Person, runId: string, body: Record<string, unknown>) =>
  call(
    decide,
    who,
    `/reconciliation/runs/${runId}/approval`,
    { id: runId },
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    },
  );

/** A payment we received by webhook, settled with its fee, and an adjustment no webhook carries. */
async function anUploadedReport() {
  const pi = unique("pi_held");
  const adj = unique("adj_held");
  expect(
    (await deliver(stripeRequest(tenant, aStripePayment({ reference: pi, amount: 2000, created: now })))).status,
  ).toBe(200);
  await drainAll();
  const csv = [
    HEADER,
    `${unique("txn_")},${at(now)},usd,20.00,0.88,19.12,charge,ch_1,${pi},ch_1,`,
    `${unique("txn_")},${at(now)},usd,-5.00,0.00,-5.00,other_adjustment,${adj},,,`,
  ].join("\n");
  return { pi, adj, csv: `${csv}\n` };
}

/** What the settlement posted for these references: postings, and the SETTLEMENT raw events stored for them. */
async function posted(...references: string[]) {
  const postings = await prisma.posting.findMany({
    where: { tenantId: tenant.id, providerReference: { in: references } },
    select: { providerReference: true, kind: true },
    orderBy: { providerReference: "asc" },
  });
  const [row] = await prisma.$queryRaw<{ n: number }[]>(Prisma.sql`
    SELECT count(*)::int AS n FROM raw_events WHERE tenant_id = ${tenant.id}::uuid AND source = 'SETTLEMENT'
      AND convert_from(raw_body, 'UTF8')::jsonb #>> '{movement,reference}' = ANY(${references}::text[])`);
  return { postings, settlementEvents: row!.n };
}

beforeAll(async () => {
  tenant = await aTenant();
  [alice, bob, carol, olga] = [
    await aPerson("accountant"),
    await aPerson("accountant"),
    await aPerson("admin"),
    await aPerson("ops"),
  ];
});

describe("settlement movements from an uploaded report wait for a second person", () => {
  it("posts nothing at upload; the uploader and ops are refused; two approvals sent at once post each movement once", async () => {
    const { pi, adj, csv } = await anUploadedReport();
    const up = await uploadAs(alice, csv);
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    expect(up.body).toMatchObject({
      matched: 1,
      theirsNotOurs: 1,
      feesPosted: 0,
      postedFromSettlement: 0,
      heldForApproval: {
        fees: 1,
        others: 1,
        totals: [
          { kind: "ADJUSTMENT", currency: "USD", count: 1, amount: "-500" },
          { kind: "FEE", currency: "USD", count: 1, amount: "88" },
        ],
      },
    });
    const runId = String(up.body.runId);
    await drainAll();
    // The payment is posted (by its webhook); nothing from the file is.
    expect(await posted(`${pi}:fee`, adj)).toEqual({ postings: [], settlementEvents: 0 });
    const held = await prisma.reconDiscrepancy.findFirstOrThrow({ where: { tenantId: tenant.id, reference: adj } });
    expect(held).toMatchObject({ state: "IN_FLIGHT", rawEventId: null });
    expect(held.note).toContain("second person");
    const pending = await call(getApproval, olga, `/reconciliation/runs/${runId}/approval`, { id: runId });
    expect(pending).toMatchObject({ status: 200, body: { status: "PENDING", startedByLabel: alice.email } });

    const own = await decideAs(alice, runId, { decision: "approve", reason: "I checked my own file" });
    expect(own.status).toBe(403);
    expect(own.body.error!.message).toMatch(/Four eyes: you started run \d+/);
    expect((await decideAs(olga, runId, { decision: "approve", reason: "ops may not" })).status).toBe(403);
    expect((await decideAs(bob, runId, { decision: "approve" })).status).toBe(400);
    expect(await posted(`${pi}:fee`, adj)).toEqual({ postings: [], settlementEvents: 0 });

    const both = await Promise.all([
      decideAs(bob, runId, { decision: "approve", reason: "matches Stripe's dashboard for the day" }),
      decideAs(carol, runId, { decision: "approve", reason: "checked against the bank" }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const won = both.find((r) => r.status === 200)!;
    expect(won.body).toMatchObject({ outcome: "approved", posted: 2, alreadyClaimed: 0 });
    expect(both.find((r) => r.status === 409)!.body.error!.message).toMatch(/already approved by/);
    // And once more, after the fact.
    expect((await decideAs(bob, runId, { decision: "approve", reason: "again" })).status).toBe(409);

    await drainAll();
    expect(await posted(`${pi}:fee`, adj)).toEqual({
      postings: [
        { providerReference: adj, kind: "ADJUSTMENT" },
        { providerReference: `${pi}:fee`, kind: "FEE" },
      ],
      settlementEvents: 2,
    });
    expect(await prisma.reconDiscrepancy.findFirstOrThrow({ where: { id: held.id } })).toMatchObject({
      state: "FETCHED",
    });
    expect(await prisma.reconRun.findUniqueOrThrow({ where: { id: BigInt(runId) } })).toMatchObject({
      feesPosted: 1,
    });
    const audit = await prisma.auditLog.findMany({
      where: {
        tenantId: tenant.id,
        subjectType: "recon_run",
        subjectId: runId,
        action: { startsWith: "recon.settlement" },
      },
    });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: "recon.settlement_approve",
      actorType: "USER",
      details: expect.objectContaining({ posted: 2, startedBy: alice.email }),
    });
    expect([bob.email, carol.email]).toContain(audit[0]!.actorLabel);
    expect(["matches Stripe's dashboard for the day", "checked against the bank"]).toContain(audit[0]!.reason);
  });

  it("a rejection posts nothing, says who and why, opens the discrepancy again and cannot be approved after", async () => {
    const { pi, adj, csv } = await anUploadedReport();
    const up = await uploadAs(alice, csv);
    expect(up.status).toBe(201);
    const runId = String(up.body.runId);
    expect((await decideAs(bob, runId, { decision: "reject", reason: "" })).status).toBe(400);
    const no = await decideAs(bob, runId, { decision: "reject", reason: "this file was edited by hand" });
    expect(no).toMatchObject({ status: 200, body: { outcome: "rejected" } });
    const late = await decideAs(carol, runId, { decision: "approve", reason: "overrule" });
    expect(late.status).toBe(409);
    expect(late.body.error!.message).toMatch(/already rejected by .*@four-eyes\.test/);
    await drainAll();
    expect(await posted(`${pi}:fee`, adj)).toEqual({ postings: [], settlementEvents: 0 });
    expect(
      await prisma.reconDiscrepancy.findFirstOrThrow({ where: { tenantId: tenant.id, reference: adj } }),
    ).toMatchObject({
      state: "OPEN",
      note: expect.stringContaining("this file was edited by hand"),
    });
    const audit = await prisma.auditLog.findFirstOrThrow({
      where: { tenantId: tenant.id, subjectId: runId, action: "recon.settlement_reject" },
    });
    expect(audit).toMatchObject({ actorLabel: bob.email, reason: "this file was edited by hand" });
    expect(await call(getApproval, bob, `/reconciliation/runs/${runId}/approval`, { id: runId })).toMatchObject({
      body: { status: "REJECTED", decidedByLabel: bob.email, reason: "this file was edited by hand" },
    });
  });

  it("an unknown run is a 404 and a run that held nothing a 409", async () => {
    expect((await decideAs(bob, "999999999", { decision: "approve", reason: "no such run" })).status).toBe(404);
    // A report with only a matched payment and no fee: nothing to hold.
    const pi = unique("pi_plain");
    expect(
      (await deliver(stripeRequest(tenant, aStripePayment({ reference: pi, amount: 700, created: now })))).status,
    ).toBe(200);
    await drainAll();
    const up = await uploadAs(
      alice,
      `${HEADER}\n${unique("txn_")},${at(now)},usd,7.00,0.00,7.00,charge,ch_2,${pi},ch_2,\n`,
    );
    expect(up.body).toMatchObject({ matched: 1, heldForApproval: null });
    const r = await decideAs(bob, String(up.body.runId), { decision: "approve", reason: "nothing there" });
    expect(r.status).toBe(409);
    expect(r.body.error!.message).toContain("holds no settlement movements");
  });

  it("the database refuses the starter as decider and a second decision, even by direct SQL", async () => {
    const { csv } = await anUploadedReport();
    const up = await uploadAs(alice, csv);
    const runId = BigInt(String(up.body.runId));
    const decideBy = (who: Person) =>
      prisma.$executeRaw(Prisma.sql`UPDATE recon_settlement_approvals SET status = 'REJECTED', decided_by_id = ${who.userId}::uuid,
        decided_by_label = ${who.email}, decided_at = now(), reason = 'by hand' WHERE run_id = ${runId}`);
    await expect(decideBy(alice)).rejects.toThrow(/maker_is_not_checker/);
    expect(await decideBy(bob)).toBe(1);
    await expect(decideBy(carol)).rejects.toThrow(/cannot be changed/);
  });
});

describe("a run against the provider's API", () => {
  let sim: Simulator;
  afterAll(async () => sim?.close());

  it("posts the settlement's fees at once, holding nothing, when a person starts it", async () => {
    const day = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - 86_400_000;
    sim = await startSimulator({
      day: generateDay({ seed: 77, events: 12, tenants: [tenant.slug], providers: ["stripe"], dayStart: day / 1000 }),
      tenant: tenant.slug,
    });
    await prisma.providerEndpoint.update({
      where: { tenantId_provider: { tenantId: tenant.id, provider: "stripe" } },
      data: { settings: { apiKey: sim.apiKey, apiBaseUrl: sim.url } },
    });
    const from = new Date(day).toISOString().slice(0, 10);
    const r = await call(
      startRun,
      alice,
      "/reconciliation/runs",
      {},
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ provider: "stripe", from }),
      },
    );
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.heldForApproval).toBeNull();
    expect(r.body.feesPosted).toBeGreaterThan(0);
    expect(await prisma.reconSettlementApproval.count({ where: { runId: BigInt(String(r.body.runId)) } })).toBe(0);
    await drainAll();
    expect(
      await prisma.posting.count({
        where: { tenantId: tenant.id, kind: "FEE", occurredAt: { gte: new Date(day), lt: new Date(day + 86_400_000) } },
      }),
    ).toBe(r.body.feesPosted);
  });
});
