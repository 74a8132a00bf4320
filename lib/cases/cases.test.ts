import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { decideProposal, getCase, proposeResolution, type Person } from "@/lib/cases/cases";
import { resetConfigForTests } from "@/lib/platform/config";
import { Prisma, prisma } from "@/lib/platform/db";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { aStripePayment, aTenant, stripeRequest, unique, type TestTenant } from "@/dev/testing/builders";
import { drain } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";
import { reconcileStripeFile } from "@/dev/testing/recon-file";
import { balanceOf as ledgerBalance } from "@/lib/ledger/accounts";

const HOUR = 3_600_000;
const THRESHOLD = 100_000n;
const dir = mkdtempSync(path.join(os.tmpdir(), "tally-cases-"));

async function aPerson(role: "accountant" | "ops" = "accountant"): Promise<Person> {
  const email = `${unique("acct")}@cases.test`;
  const u = await prisma.user.create({ data: { email, role } });
  return { userId: u.id, label: email };
}

type SettledLine = { reference: string; amount: string; currency: string };

/** Runs reconciliation for the window against a Tally-format report holding exactly these lines. */
async function reconcile(tenant: TestTenant, window: { from: Date; to: Date }, lines: SettledLine[]) {
  const file = path.join(dir, `${unique("report-")}.csv`);
  const at = new Date(window.from.getTime() + HOUR).toISOString();
  writeFileSync(
    file,
    `${[
      "reference,kind,amount,currency,occurred_at",
      ...lines.map((l) => `${l.reference},payment,${l.amount},${l.currency},${at}`),
    ].join("\n")}\n`,
  );
  const r = await reconcileStripeFile(tenant.id, window, file);
  if (!r.ok) throw new Error(r.message);
  return r.value;
}

/** A posted Stripe payment and the case reconciliation opened for it: ours-not-theirs, or a mismatch when the provider reports another amount. */
async function aCase(o: { amount: bigint; theirs?: SettledLine["amount"] }) {
  const tenant = await aTenant();
  const account = unique("acct_case_");
  const payment = aStripePayment({ amount: o.amount, account });
  expect((await deliver(stripeRequest(tenant, payment))).status).toBe(200);
  await drain();
  const reference = payment.data.object.id;
  const window = { from: new Date(Date.now() - 2 * HOUR), to: new Date(Date.now() + 2 * HOUR) };
  const lines = o.theirs ? [{ reference, amount: o.theirs, currency: "USD" }] : [];
  const run = await reconcile(tenant, window, lines);
  const found = await prisma.case.findFirstOrThrow({
    where: { tenantId: tenant.id, discrepancy: { reference } },
    include: { discrepancy: true },
  });
  return { tenant, reference, account: `customer:${account}`, window, lines, run, caseId: found.id, found };
}

async function customerBalance(tenant: TestTenant, code: string): Promise<bigint> {
  return ledgerBalance(tenant.id, code, "USD");
}

async function ledgerSnapshot(tenant: TestTenant) {
  return prisma.posting.findMany({
    where: { tenantId: tenant.id },
    orderBy: { id: "asc" },
    include: { entries: { orderBy: { id: "asc" } } },
  });
}

let alice: Person;
let bruno: Person;
let carla: Person;

beforeAll(async () => {
  process.env.TALLY_CASE_SECOND_APPROVAL_ABOVE = String(THRESHOLD);
  resetConfigForTests();
  [alice, bruno, carla] = [await aPerson(), await aPerson(), await aPerson()];
});

describe("an ours-not-theirs case corrected with four eyes", () => {
  it("the approved reversal is one new CORRECTION posting through the same accounts, with the case closed and both steps audited; re-running reconciliation no longer reports it", async () => {
    const k = await aCase({ amount: 4200n });
    expect(k.run).toMatchObject({ oursNotTheirs: 1, casesOpened: 1 });
    expect(k.found).toMatchObject({ kind: "OURS_NOT_THEIRS", status: "OPEN" });
    expect(await customerBalance(k.tenant, k.account)).toBe(-4200n);

    const proposed = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "CORRECT",
      reasonCode: "not_settled",
      reason: "Stripe shows the intent as failed",
    });
    expect(proposed).toMatchObject({ ok: true, value: { requiredApprovals: 1, amount: 4200n, currency: "USD" } });
    const proposalId = proposed.ok ? proposed.value.proposalId : 0n;
    // The plan shown before submitting is exactly what is posted on approval.
    const plan = proposed.ok ? proposed.value.plan! : null;
    expect(plan!.legs.map((l) => [l.accountCode, l.amount, l.currency])).toEqual([
      ["clearing:stripe", "-4200", "USD"],
      [k.account, "4200", "USD"],
    ]);
    expect((await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).status).toBe("PROPOSED");

    const approved = await decideProposal(k.tenant.id, k.caseId, proposalId, bruno, { decision: "approve" });
    expect(approved).toMatchObject({ ok: true, value: { outcome: "carried_out", status: "RESOLVED" } });
    const postingId = approved.ok && approved.value.outcome === "carried_out" ? approved.value.postingId! : 0n;

    const original = k.found.discrepancy!.postingId!;
    const correction = await prisma.posting.findUniqueOrThrow({
      where: { id: postingId },
      include: { entries: { include: { account: true } } },
    });
    const originalPosting = await prisma.posting.findUniqueOrThrow({
      where: { id: original },
      include: { entries: true },
    });
    expect(correction).toMatchObject({
      kind: "CORRECTION",
      reversesPostingId: original,
      provider: "stripe",
      providerReference: k.reference,
      processedEventId: null,
    });
    expect(correction.entries.map((e) => e.accountId).sort()).toEqual(
      originalPosting.entries.map((e) => e.accountId).sort(),
    );
    expect(await customerBalance(k.tenant, k.account)).toBe(0n);

    expect(await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).toMatchObject({
      status: "RESOLVED",
      closedAt: expect.any(Date),
    });
    expect(await prisma.reconDiscrepancy.findUniqueOrThrow({ where: { id: k.found.discrepancyId! } })).toMatchObject({
      state: "RESOLVED",
    });
    expect(await prisma.caseProposal.findUniqueOrThrow({ where: { id: proposalId } })).toMatchObject({
      status: "APPROVED",
      postingId,
    });
    const audit = await prisma.auditLog.findMany({
      where: { tenantId: k.tenant.id, subjectType: "case", subjectId: String(k.caseId) },
      orderBy: { id: "asc" },
    });
    expect(audit.map((a) => [a.action, a.actorLabel])).toEqual([
      ["case.propose", alice.label],
      ["case.approve", bruno.label],
    ]);
    expect(audit[1]!.details).toMatchObject({ postingId: String(postingId) });

    const again = await reconcile(k.tenant, k.window, k.lines);
    expect(again).toMatchObject({ oursNotTheirs: 0, mismatched: 0, theirsNotOurs: 0, casesOpened: 0 });
    expect(await prisma.reconRunItem.count({ where: { runId: again.runId } })).toBe(0);
    expect(await ledgerViolations(k.tenant.id)).toEqual([]);
  });

  it("corrections never edit existing postings: every earlier posting and entry is unchanged, one posting is added, and the ledger refuses edits", async () => {
    const k = await aCase({ amount: 1500n });
    const before = await ledgerSnapshot(k.tenant);
    const p = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "CORRECT",
      reasonCode: "posted_in_error",
      reason: "wrong reference posted",
    });
    expect(
      (await decideProposal(k.tenant.id, k.caseId, p.ok ? p.value.proposalId : 0n, bruno, { decision: "approve" })).ok,
    ).toBe(true);
    const after = await ledgerSnapshot(k.tenant);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after).toHaveLength(before.length + 1);
    expect(after.at(-1)).toMatchObject({ kind: "CORRECTION", reversesPostingId: before[0]!.id });
    await expect(
      prisma.$executeRaw(Prisma.sql`UPDATE ledger_entries SET amount = 1 WHERE posting_id = ${before[0]!.id}`),
    ).rejects.toThrow(/append-only/);
    await expect(prisma.$executeRaw(Prisma.sql`DELETE FROM postings WHERE id = ${after.at(-1)!.id}`)).rejects.toThrow(
      /append-only/,
    );
  });

  it("if the correction posting fails, nothing changes: no posting, no approval, no audit entry, the case still waits; once the fault is gone the same approval works", async () => {
    const k = await aCase({ amount: 990n });
    const p = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "CORRECT",
      reasonCode: "not_settled",
      reason: "never settled",
    });
    const proposalId = p.ok ? p.value.proposalId : 0n;
    const snapshot = async () => ({
      postings: await ledgerSnapshot(k.tenant),
      balances: await prisma.balance.findMany({
        where: { account: { tenantId: k.tenant.id } },
        orderBy: [{ accountId: "asc" }, { currency: "asc" }],
      }),
      case: await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } }),
      proposal: await prisma.caseProposal.findUniqueOrThrow({ where: { id: proposalId } }),
      approvals: await prisma.caseApproval.count({ where: { proposalId } }),
      audit: await prisma.auditLog.count({ where: { tenantId: k.tenant.id } }),
      discrepancy: await prisma.reconDiscrepancy.findUniqueOrThrow({ where: { id: k.found.discrepancyId! } }),
    });
    const before = await snapshot();
    // A real failure inside the transaction, after the approval row and the case update were written.
    await prisma.$executeRawUnsafe(
      `CREATE FUNCTION refuse_corrections() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.kind = 'CORRECTION' THEN RAISE EXCEPTION 'injected: posting refused'; END IF; RETURN NEW; END $$`,
    );
    await prisma.$executeRawUnsafe(
      `CREATE TRIGGER refuse_corrections BEFORE INSERT ON postings FOR EACH ROW EXECUTE FUNCTION refuse_corrections()`,
    );
    try {
      await expect(decideProposal(k.tenant.id, k.caseId, proposalId, bruno, { decision: "approve" })).rejects.toThrow(
        /injected: posting refused/,
      );
    } finally {
      await prisma.$executeRawUnsafe(`DROP TRIGGER refuse_corrections ON postings`);
      await prisma.$executeRawUnsafe(`DROP FUNCTION refuse_corrections()`);
    }
    expect(await snapshot()).toEqual(before);
    expect(before.case.status).toBe("PROPOSED");
    const retried = await decideProposal(k.tenant.id, k.caseId, proposalId, bruno, { decision: "approve" });
    expect(retried).toMatchObject({ ok: true, value: { outcome: "carried_out" } });
  });
});

describe("maker ≠ checker", () => {
  it("the proposer is refused by the domain, and by the database when the domain check is bypassed", async () => {
    const k = await aCase({ amount: 2500n });
    const p = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "CORRECT",
      reasonCode: "not_settled",
      reason: "not at Stripe",
    });
    const proposalId = p.ok ? p.value.proposalId : 0n;
    expect(await decideProposal(k.tenant.id, k.caseId, proposalId, alice, { decision: "approve" })).toMatchObject({
      ok: false,
      reason: "own_proposal",
    });

    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    const insert = (proposer: string, approver: string) =>
      client.query(
        `INSERT INTO case_approvals (proposal_id, proposer_id, approver_id, approver_label, decision) VALUES ($1, $2, $3, 'direct sql', 'APPROVE')`,
        [String(proposalId), proposer, approver],
      );
    try {
      // Honest about the proposer, approving oneself: the CHECK refuses.
      await expect(insert(alice.userId, alice.userId)).rejects.toThrow(/case_approvals_maker_is_not_checker/);
      // Lying about the proposer to get past the CHECK: the proposer must be the proposal's real one.
      await expect(insert(bruno.userId, alice.userId)).rejects.toThrow(/case_approvals_proposal_id_proposer_id_fkey/);
      // Rewriting the proposal's proposer first: proposals cannot change who proposed them.
      await expect(
        client.query(`UPDATE case_proposals SET proposed_by_id = $2 WHERE id = $1`, [String(proposalId), bruno.userId]),
      ).rejects.toThrow(/cannot change/);
      // The same statement by a different person is accepted (in a transaction rolled back): the refusals above are the rule, not a broken insert.
      await client.query("BEGIN");
      await expect(insert(alice.userId, bruno.userId)).resolves.toMatchObject({ rowCount: 1 });
      await client.query("ROLLBACK");
    } finally {
      await client.end();
    }
    expect(await prisma.caseApproval.count({ where: { proposalId } })).toBe(0);
    expect((await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).status).toBe("PROPOSED");
  });

  it("above the threshold two different accountants must approve; at the threshold one is enough", async () => {
    const above = await aCase({ amount: THRESHOLD + 1n });
    const p = await proposeResolution(above.tenant.id, above.caseId, alice, {
      resolution: "CORRECT",
      reasonCode: "not_settled",
      reason: "large and not at Stripe",
    });
    expect(p).toMatchObject({ ok: true, value: { requiredApprovals: 2, amount: THRESHOLD + 1n } });
    const proposalId = p.ok ? p.value.proposalId : 0n;
    expect(
      await decideProposal(above.tenant.id, above.caseId, proposalId, bruno, { decision: "approve" }),
    ).toMatchObject({ ok: true, value: { outcome: "awaiting_approval", approvals: 1, required: 2 } });
    expect(await prisma.posting.count({ where: { tenantId: above.tenant.id, kind: "CORRECTION" } })).toBe(0);
    expect((await prisma.case.findUniqueOrThrow({ where: { id: above.caseId } })).status).toBe("PROPOSED");
    // The same approver twice is one approval, and the proposer never counts.
    expect(
      await decideProposal(above.tenant.id, above.caseId, proposalId, bruno, { decision: "approve" }),
    ).toMatchObject({ ok: false, reason: "already_decided" });
    expect(
      await decideProposal(above.tenant.id, above.caseId, proposalId, alice, { decision: "approve" }),
    ).toMatchObject({ ok: false, reason: "own_proposal" });
    const second = await decideProposal(above.tenant.id, above.caseId, proposalId, carla, { decision: "approve" });
    expect(second).toMatchObject({ ok: true, value: { outcome: "carried_out", status: "RESOLVED" } });
    expect(await prisma.posting.count({ where: { tenantId: above.tenant.id, kind: "CORRECTION" } })).toBe(1);
    expect(await prisma.caseApproval.findMany({ where: { proposalId }, select: { approverId: true } })).toEqual([
      { approverId: bruno.userId },
      { approverId: carla.userId },
    ]);

    const at = await aCase({ amount: THRESHOLD });
    const q = await proposeResolution(at.tenant.id, at.caseId, alice, {
      resolution: "CORRECT",
      reasonCode: "not_settled",
      reason: "exactly at the threshold",
    });
    expect(q).toMatchObject({ ok: true, value: { requiredApprovals: 1 } });
  });

  it("a rejection needs a reason, returns the case to open, and the next proposal starts afresh", async () => {
    const k = await aCase({ amount: 700n });
    const p = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "CORRECT",
      reasonCode: "test_payment",
      reason: "looks like a test",
    });
    const proposalId = p.ok ? p.value.proposalId : 0n;
    expect(await decideProposal(k.tenant.id, k.caseId, proposalId, bruno, { decision: "reject" })).toMatchObject({
      ok: false,
      reason: "reason_required",
    });
    expect(
      await decideProposal(k.tenant.id, k.caseId, proposalId, bruno, {
        decision: "reject",
        reason: "it is a real customer payment",
      }),
    ).toMatchObject({ ok: true, value: { outcome: "rejected", status: "OPEN" } });
    expect(await decideProposal(k.tenant.id, k.caseId, proposalId, carla, { decision: "approve" })).toMatchObject({
      ok: false,
      reason: "not_pending",
    });
    expect(await prisma.posting.count({ where: { tenantId: k.tenant.id, kind: "CORRECTION" } })).toBe(0);
    expect(
      await proposeResolution(k.tenant.id, k.caseId, bruno, {
        resolution: "ESCALATE",
        reason: "ask Stripe for their record",
      }),
    ).toMatchObject({ ok: true });
    expect(
      await decideProposal(
        k.tenant.id,
        k.caseId,
        (await prisma.caseProposal.findFirstOrThrow({ where: { caseId: k.caseId, status: "PENDING" } })).id,
        alice,
        { decision: "approve" },
      ),
    ).toMatchObject({ ok: true, value: { outcome: "carried_out", status: "ESCALATED", postingId: null } });
  });

  it("cases of another tenant are not found", async () => {
    const k = await aCase({ amount: 100n });
    const other = await aTenant();
    expect(
      await proposeResolution(other.id, k.caseId, alice, { resolution: "ESCALATE", reason: "probe" }),
    ).toMatchObject({ ok: false, reason: "not_found" });
    expect(await getCase(other.id, k.caseId)).toBeNull();
  });
});

describe("mismatches and timing", () => {
  it("an approved mismatch adjustment makes our net equal the provider's amount, and the next run matches it", async () => {
    const k = await aCase({ amount: 5000n, theirs: "45.00" });
    expect(k.found).toMatchObject({ kind: "MISMATCH", discrepancy: { ourAmount: 5000n, theirAmount: 4500n } });
    expect(
      await proposeResolution(k.tenant.id, k.caseId, alice, { resolution: "TIMING", reason: "maybe later" }),
    ).toMatchObject({ ok: false, reason: "invalid_resolution" });
    const p = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "CORRECT",
      reasonCode: "amount_differs",
      reason: "customer paid 45.00, not 50.00",
    });
    expect(p.ok && p.value.plan!.legs.map((l) => [l.accountCode, l.amount])).toEqual([
      ["clearing:stripe", "-500"],
      [k.account, "500"],
    ]);
    expect(
      (await decideProposal(k.tenant.id, k.caseId, p.ok ? p.value.proposalId : 0n, bruno, { decision: "approve" })).ok,
    ).toBe(true);
    expect(await customerBalance(k.tenant, k.account)).toBe(-4500n);
    const again = await reconcile(k.tenant, k.window, k.lines);
    expect(again).toMatchObject({ matched: 1, mismatched: 0, oursNotTheirs: 0 });
  });

  it("a case approved as timing waits; the next run that still finds it reopens it, and a run that matches it closes it", async () => {
    const k = await aCase({ amount: 3300n });
    const p = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "TIMING",
      reason: "paid at 23:59, Stripe reports it tomorrow",
    });
    expect(
      await decideProposal(k.tenant.id, k.caseId, p.ok ? p.value.proposalId : 0n, bruno, { decision: "approve" }),
    ).toMatchObject({ ok: true, value: { status: "WAITING", postingId: null } });
    expect(await prisma.posting.count({ where: { tenantId: k.tenant.id, kind: "CORRECTION" } })).toBe(0);

    // A run that does not cover the payment leaves it waiting.
    await reconcile(
      k.tenant,
      { from: new Date(k.window.from.getTime() - 48 * HOUR), to: new Date(k.window.from.getTime() - 24 * HOUR) },
      [],
    );
    expect((await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).status).toBe("WAITING");

    // The next run covering it still does not find it at the provider: a case again, for a person.
    const still = await reconcile(k.tenant, k.window, []);
    expect(still.oursNotTheirs).toBe(1);
    expect(await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).toMatchObject({
      status: "OPEN",
      waitingSince: null,
    });
    expect(
      await prisma.auditLog.findFirst({
        where: { tenantId: k.tenant.id, action: "case.reopen", subjectId: String(k.caseId) },
      }),
    ).toMatchObject({ actorType: "SYSTEM" });

    // Approved as timing again; this time the provider reports it: matched, closed.
    const q = await proposeResolution(k.tenant.id, k.caseId, bruno, {
      resolution: "TIMING",
      reason: "Stripe support says it settles today",
    });
    expect(
      (await decideProposal(k.tenant.id, k.caseId, q.ok ? q.value.proposalId : 0n, alice, { decision: "approve" })).ok,
    ).toBe(true);
    const matched = await reconcile(k.tenant, k.window, [{ reference: k.reference, amount: "33.00", currency: "USD" }]);
    expect(matched).toMatchObject({ matched: 1, oursNotTheirs: 0, resolvedOnRecheck: 1 });
    expect(await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).toMatchObject({
      status: "RESOLVED",
      waitingSince: null,
      resolution: expect.stringContaining("matched on re-check"),
    });
  });

  it("a run that matches a case with a proposal still pending closes the case and supersedes the proposal", async () => {
    const k = await aCase({ amount: 1200n });
    const p = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "CORRECT",
      reasonCode: "not_settled",
      reason: "not at Stripe",
    });
    const proposalId = p.ok ? p.value.proposalId : 0n;
    await reconcile(k.tenant, k.window, [{ reference: k.reference, amount: "12.00", currency: "USD" }]);
    expect((await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).status).toBe("RESOLVED");
    expect((await prisma.caseProposal.findUniqueOrThrow({ where: { id: proposalId } })).status).toBe("SUPERSEDED");
    expect(await decideProposal(k.tenant.id, k.caseId, proposalId, bruno, { decision: "approve" })).toMatchObject({
      ok: false,
      reason: "not_pending",
    });
    expect(await prisma.posting.count({ where: { tenantId: k.tenant.id, kind: "CORRECTION" } })).toBe(0);
  });

  it("shows the evidence side by side: the raw webhook, our posting and the provider's line or its absence", async () => {
    const k = await aCase({ amount: 5000n, theirs: "45.00" });
    const detail = (await getCase(k.tenant.id, k.caseId))!;
    expect(detail.raw).toMatchObject({
      provider: "stripe",
      source: "WEBHOOK",
      body: expect.stringContaining(k.reference),
    });
    expect(detail.postings).toHaveLength(1);
    expect(detail.theirs).toMatchObject({
      row: 2,
      format: "tally",
      header: ["reference", "kind", "amount", "currency", "occurred_at"],
      line: expect.stringContaining(k.reference),
    });
    expect(detail.plan!.legs).toHaveLength(2);
    const ours = await aCase({ amount: 100n });
    expect((await getCase(ours.tenant.id, ours.caseId))!.theirs).toBeNull();
  });
});

describe("four-eyes held by the database, against direct SQL", () => {
  /** Runs statements in one transaction on a plain connection, then commits (or, with `check`, runs the deferred checks and rolls back). */
  async function directSql(statements: [string, unknown[]?][], mode: "commit" | "check" = "commit") {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query("BEGIN");
      const results = [];
      for (const [sql, params] of statements) results.push(await client.query(sql, params));
      if (mode === "check") {
        await client.query("SET CONSTRAINTS ALL IMMEDIATE");
        await client.query("ROLLBACK");
      } else await client.query("COMMIT");
      return results;
    } catch (e) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw e;
    } finally {
      await client.end();
    }
  }
  const approve = (proposalId: bigint, proposer: Person, approver: Person): [string, unknown[]] => [
    `INSERT INTO case_approvals (proposal_id, proposer_id, approver_id, approver_label, decision) VALUES ($1, $2, $3, 'direct sql', 'APPROVE')`,
    [String(proposalId), proposer.userId, approver.userId],
  ];
  const markApproved = (proposalId: bigint, postingId: bigint | null = null): [string, unknown[]] => [
    `UPDATE case_proposals SET status = 'APPROVED', decided_at = now(), posting_id = $2 WHERE id = $1`,
    [String(proposalId), postingId === null ? null : String(postingId)],
  ];
  const markWaiting = (caseId: bigint): [string, unknown[]] => [
    `UPDATE cases SET status = 'WAITING', waiting_since = now() WHERE id = $1`,
    [String(caseId)],
  ];

  async function proposed(amount: bigint, resolution: "TIMING" | "CORRECT") {
    const k = await aCase({ amount });
    const p = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution,
      reasonCode: resolution === "CORRECT" ? "not_settled" : null,
      reason: "direct sql test",
    });
    if (!p.ok) throw new Error(p.message);
    return { ...k, proposalId: p.value.proposalId, requiredApprovals: p.value.requiredApprovals };
  }

  it("refuses a proposal set APPROVED, and its case set WAITING, without the approvals it needs", async () => {
    const k = await proposed(3000n, "TIMING");
    expect(k.requiredApprovals).toBe(1);
    await expect(directSql([markApproved(k.proposalId), markWaiting(k.caseId)])).rejects.toThrow(
      /APPROVED with 0 of its 1 required approvals/,
    );
    // The case alone, its proposal still pending: refused too.
    await expect(directSql([markWaiting(k.caseId)])).rejects.toThrow(
      /can wait only when its proposal of timing is approved/,
    );
    // With the approval row in the same transaction, the same statements pass: the refusals are the rule.
    await expect(
      directSql([approve(k.proposalId, alice, bruno), markApproved(k.proposalId), markWaiting(k.caseId)], "check"),
    ).resolves.toBeDefined();
    expect(await prisma.caseProposal.findUniqueOrThrow({ where: { id: k.proposalId } })).toMatchObject({
      status: "PENDING",
    });
    expect(await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).toMatchObject({ status: "PROPOSED" });
  });

  it("refuses a proposal above the threshold APPROVED with one approval of the two it needs", async () => {
    const k = await proposed(THRESHOLD + 1n, "TIMING");
    expect(k.requiredApprovals).toBe(2);
    await expect(
      directSql([approve(k.proposalId, alice, bruno), markApproved(k.proposalId), markWaiting(k.caseId)]),
    ).rejects.toThrow(/APPROVED with 1 of its 2 required approvals/);
    await expect(
      directSql(
        [
          approve(k.proposalId, alice, bruno),
          approve(k.proposalId, alice, carla),
          markApproved(k.proposalId),
          markWaiting(k.caseId),
        ],
        "check",
      ),
    ).resolves.toBeDefined();
  });

  it("refuses an approved case decision reused: a case reopened by a run cannot be set WAITING again without a new proposal", async () => {
    const k = await proposed(3100n, "TIMING");
    expect(await decideProposal(k.tenant.id, k.caseId, k.proposalId, bruno, { decision: "approve" })).toMatchObject({
      ok: true,
      value: { status: "WAITING" },
    });
    await directSql([[`UPDATE cases SET status = 'OPEN', waiting_since = NULL WHERE id = $1`, [String(k.caseId)]]]);
    await expect(
      directSql([[`UPDATE cases SET status = 'PROPOSED' WHERE id = $1`, [String(k.caseId)]], markWaiting(k.caseId)]),
    ).rejects.toThrow(/PROPOSED without a pending proposal|can wait only/);
    await expect(directSql([markWaiting(k.caseId)])).rejects.toThrow(
      /can wait only when its proposal of timing is approved/,
    );
  });

  it("refuses an approved correction whose posting is not that case's correction as planned", async () => {
    const k = await proposed(4400n, "CORRECT");
    const p = await prisma.caseProposal.findUniqueOrThrow({ where: { id: k.proposalId } });
    const plan = p.correction as unknown as {
      reversesPostingId: string;
      legs: { accountId: string; amount: string; currency: string }[];
    };
    const original = await prisma.posting.findUniqueOrThrow({ where: { id: BigInt(plan.reversesPostingId) } });
    const resolve: [string, unknown[]] = [
      `UPDATE cases SET status = 'RESOLVED', closed_at = now() WHERE id = $1`,
      [String(k.caseId)],
    ];
    /** A CORRECTION posting written by hand, with these legs (each pair balanced), then the proposal approved naming it. */
    const withPosting = (
      legs: { accountId: string; amount: string; currency: string }[],
      reference = k.reference,
    ): [string, unknown[]?][] => [
      [
        `INSERT INTO postings (tenant_id, kind, provider, provider_reference, reverses_posting_id, description, occurred_at) VALUES ($1, 'CORRECTION', 'stripe', $2, $3, 'by hand', now())`,
        [k.tenant.id, reference, plan.reversesPostingId],
      ],
      ...legs.map((l): [string, unknown[]] => [
        `INSERT INTO ledger_entries (posting_id, account_id, amount, currency) VALUES (currval('postings_id_seq'), $1, $2, $3)`,
        [l.accountId, l.amount, l.currency],
      ]),
      approve(k.proposalId, alice, bruno),
      [
        `UPDATE case_proposals SET status = 'APPROVED', decided_at = now(), posting_id = currval('postings_id_seq') WHERE id = $1`,
        [String(k.proposalId)],
      ],
      resolve,
    ];
    // The case's own payment posting passed off as its correction.
    await expect(
      directSql([approve(k.proposalId, alice, bruno), markApproved(k.proposalId, original.id), resolve]),
    ).rejects.toThrow(/not the correction it approved/);
    // A correction that doubles the planned amounts.
    await expect(
      directSql(withPosting(plan.legs.map((l) => ({ ...l, amount: String(BigInt(l.amount) * 2n) })))),
    ).rejects.toThrow(/not the correction it approved/);
    // The planned legs, booked under another reference.
    await expect(directSql(withPosting(plan.legs, `${k.reference}_other`))).rejects.toThrow(
      /not the correction it approved/,
    );
    // Exactly as planned: accepted (then rolled back), so the refusals above are the rule.
    await expect(directSql(withPosting(plan.legs), "check")).resolves.toBeDefined();
    // And the product's own approval still goes through.
    expect(await decideProposal(k.tenant.id, k.caseId, k.proposalId, bruno, { decision: "approve" })).toMatchObject({
      ok: true,
      value: { outcome: "carried_out", status: "RESOLVED" },
    });
  });
});
