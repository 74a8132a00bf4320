// Manual links under four eyes: N settlement lines that together are one posting
// (a split payment the provider settled under other references), proposed by one
// accountant and approved by a different one; the sums checked by the domain and
// again by the database at commit; maker ≠ checker held by the database.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "csv-parse/sync";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { aStripePayment, aTenant, stripeRequest, unique, type TestTenant } from "@/dev/testing/builders";
import { drain } from "@/dev/testing/drain";
import { reconcileStripeFile } from "@/dev/testing/recon-file";
import { deliver } from "@/dev/testing/route";
import { decideProposal, getCase, proposeResolution, type Person } from "@/lib/cases/cases";
import { resetConfigForTests } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { exportCsv } from "@/lib/views/exports";

const HOUR = 3_600_000;
const dir = mkdtempSync(path.join(os.tmpdir(), "tally-link-"));

async function aPerson(): Promise<Person> {
  const email = `${unique("acct")}@link.test`;
  const u = await prisma.user.create({ data: { email, role: "accountant" } });
  return { userId: u.id, label: email };
}

type Line = { reference: string; amount: string; currency?: string };

/**
 * A payment of ours for `amount` (minor units) and a reconciliation whose report
 * has these lines instead of it: an ours-not-theirs case (or a mismatch, when a
 * line carries the payment's own reference), and theirs-not-ours lines.
 */
async function aSplit(o: { amount: bigint; lines: (reference: string) => Line[]; tenant?: TestTenant }) {
  const tenant = o.tenant ?? (await aTenant());
  const payment = aStripePayment({ amount: o.amount, account: unique("acct_split_") });
  expect((await deliver(stripeRequest(tenant, payment))).status).toBe(200);
  await drain();
  const reference = payment.data.object.id;
  const window = { from: new Date(Date.now() - 2 * HOUR), to: new Date(Date.now() + 2 * HOUR) };
  const at = new Date(window.from.getTime() + HOUR).toISOString();
  const lines = o.lines(reference);
  const file = path.join(dir, `${unique("report-")}.csv`);
  writeFileSync(
    file,
    `${["reference,kind,amount,currency,occurred_at", ...lines.map((l) => `${l.reference},payment,${l.amount},${l.currency ?? "USD"},${at}`)].join("\n")}\n`,
  );
  const run = await reconcileStripeFile(tenant.id, window, file);
  if (!run.ok) throw new Error(run.message);
  const found = await prisma.case.findFirstOrThrow({
    where: { tenantId: tenant.id, discrepancy: { reference } },
    include: { discrepancy: true },
  });
  const line = async (ref: string) =>
    prisma.reconDiscrepancy.findFirstOrThrow({ where: { tenantId: tenant.id, reference: ref } });
  return { tenant, reference, caseId: found.id, postingId: found.discrepancy!.postingId!, found, line, run: run.value };
}

let alice: Person;
let bruno: Person;

beforeAll(async () => {
  process.env.TALLY_CASE_SECOND_APPROVAL_ABOVE = "100000";
  resetConfigForTests();
  [alice, bruno] = [await aPerson(), await aPerson()];
});

describe("a split payment linked with four eyes", () => {
  it("two settlement lines that together are our posting: proposed by one accountant, approved by another; the case is resolved, the lines and the case's discrepancy are RESOLVED naming the link, the link is stored, nothing is posted, both steps audited", async () => {
    const k = await aSplit({
      amount: 10_000n,
      lines: (ref) => [
        { reference: `${ref}_a`, amount: "60.00" },
        { reference: `${ref}_b`, amount: "40.00" },
      ],
    });
    expect(k.found).toMatchObject({ kind: "OURS_NOT_THEIRS", status: "OPEN" });
    const [a, b] = [await k.line(`${k.reference}_a`), await k.line(`${k.reference}_b`)];
    expect([a.bucket, a.theirAmount, b.theirAmount]).toEqual(["THEIRS_NOT_OURS", 6000n, 4000n]);
    expect(["OPEN", "FETCH_FAILED"]).toContain(a.state);

    // The page offers both lines against the posting's amount.
    const detail = (await getCase(k.tenant.id, k.caseId))!;
    expect(detail.resolutions).toContain("LINK");
    expect(detail.linkable).toMatchObject({ postingId: k.postingId, amount: 10_000n, currency: "USD" });
    expect(detail.linkable!.lines.map((l) => l.discrepancyId).sort()).toEqual([a.id, b.id].sort());

    const postingsBefore = await prisma.posting.count({ where: { tenantId: k.tenant.id } });
    const proposed = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "LINK",
      reason: "Stripe split the charge in two; together they are our payment",
      link: { postingId: k.postingId, discrepancyIds: [a.id, b.id] },
    });
    expect(proposed).toMatchObject({
      ok: true,
      value: { requiredApprovals: 1, amount: 10_000n, currency: "USD", plan: null, link: { amount: 10_000n } },
    });
    const proposalId = proposed.ok ? proposed.value.proposalId : 0n;
    // Proposing changes nothing but the case's state: the lines stay open until approval.
    expect((await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).status).toBe("PROPOSED");
    expect((await k.line(a.reference)).state).toBe(a.state);

    expect(await decideProposal(k.tenant.id, k.caseId, proposalId, alice, { decision: "approve" })).toMatchObject({
      ok: false,
      reason: "own_proposal",
    });
    const approved = await decideProposal(k.tenant.id, k.caseId, proposalId, bruno, { decision: "approve" });
    expect(approved).toMatchObject({
      ok: true,
      value: { outcome: "carried_out", resolution: "LINK", status: "RESOLVED", postingId: null },
    });

    const note = `linked by case #${k.caseId}: ${a.reference} + ${b.reference} = posting #${k.postingId} (100.00 USD)`;
    expect(await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).toMatchObject({
      status: "RESOLVED",
      closedAt: expect.any(Date),
      resolution: `${note} (proposed by ${alice.label}, approved by ${bruno.label})`,
    });
    for (const id of [a.id, b.id, k.found.discrepancyId!])
      expect(await prisma.reconDiscrepancy.findUniqueOrThrow({ where: { id } })).toMatchObject({
        state: "RESOLVED",
        resolvedAt: expect.any(Date),
        note,
      });
    expect(
      await prisma.caseLink.findMany({
        where: { proposalId },
        orderBy: { id: "asc" },
        select: { tenantId: true, postingId: true, discrepancyId: true, amount: true, currency: true },
      }),
    ).toEqual([
      { tenantId: k.tenant.id, postingId: k.postingId, discrepancyId: a.id, amount: 6000n, currency: "USD" },
      { tenantId: k.tenant.id, postingId: k.postingId, discrepancyId: b.id, amount: 4000n, currency: "USD" },
    ]);
    expect(await prisma.posting.count({ where: { tenantId: k.tenant.id } })).toBe(postingsBefore);
    const audit = await prisma.auditLog.findMany({
      where: { tenantId: k.tenant.id, subjectType: "case", subjectId: String(k.caseId) },
      orderBy: { id: "asc" },
    });
    expect(audit.map((x) => [x.action, x.actorLabel])).toEqual([
      ["case.propose", alice.label],
      ["case.approve", bruno.label],
    ]);
    expect(audit[0]!.details).toMatchObject({
      resolution: "LINK",
      link: {
        postingId: String(k.postingId),
        lines: [expect.stringContaining(a.reference), expect.stringContaining(b.reference)],
      },
    });
    expect(audit[1]!.details).toMatchObject({ resolution: "LINK", link: { note } });

    // The period's export names the lines the case was linked with.
    const today = new Date(new Date().toISOString().slice(0, 10));
    const csv = await new Response(
      exportCsv("cases", k.tenant.id, { from: today, to: new Date(today.getTime() + 86_400_000) }),
    ).text();
    const row = (parse(csv, { columns: true }) as Record<string, string>[]).find((r) => r.reference === k.reference)!;
    expect(row).toMatchObject({
      status: "RESOLVED",
      last_proposal: "LINK",
      linked_lines: `${a.reference} 6000 USD; ${b.reference} 4000 USD`,
      stake_minor: "10000",
    });

    // Resolved lines are never linked again, from any case.
    const again = await aSplit({ tenant: k.tenant, amount: 6000n, lines: () => [] });
    expect(
      await proposeResolution(k.tenant.id, again.caseId, alice, {
        resolution: "LINK",
        reason: "try the same line",
        link: { postingId: again.postingId, discrepancyIds: [a.id] },
      }),
    ).toMatchObject({ ok: false, reason: "invalid_link", message: expect.stringContaining("already resolved") });
  });

  it("a mismatch: the provider's line under our reference plus one under another make up our posting", async () => {
    const k = await aSplit({
      amount: 5000n,
      lines: (ref) => [
        { reference: ref, amount: "45.00" },
        { reference: `${ref}_rest`, amount: "5.00" },
      ],
    });
    expect(k.found).toMatchObject({ kind: "MISMATCH", discrepancy: { ourAmount: 5000n, theirAmount: 4500n } });
    const rest = await k.line(`${k.reference}_rest`);
    const p = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "LINK",
      reason: "the remaining 5.00 settled as its own line",
      link: { postingId: k.postingId, discrepancyIds: [k.found.discrepancyId!, rest.id] },
    });
    expect(p).toMatchObject({ ok: true });
    expect(
      await decideProposal(k.tenant.id, k.caseId, p.ok ? p.value.proposalId : 0n, bruno, { decision: "approve" }),
    ).toMatchObject({ ok: true, value: { status: "RESOLVED" } });
    expect((await k.line(rest.reference)).state).toBe("RESOLVED");
  });
});

describe("a link must add up, from records the case may link", () => {
  it("refuses lines that do not sum to the posting, another currency, another tenant's, ours-not-theirs lines, another posting and a line twice, each naming the problem; nothing is stored", async () => {
    const k = await aSplit({
      amount: 10_000n,
      lines: (ref) => [
        { reference: `${ref}_a`, amount: "60.00" },
        { reference: `${ref}_b`, amount: "39.99" },
        { reference: `${ref}_eur`, amount: "40.00", currency: "EUR" },
      ],
    });
    const [a, b, eur] = await Promise.all([
      k.line(`${k.reference}_a`),
      k.line(`${k.reference}_b`),
      k.line(`${k.reference}_eur`),
    ]);
    const elsewhere = await aSplit({ amount: 4000n, lines: (ref) => [{ reference: `${ref}_x`, amount: "40.00" }] });
    const foreign = await elsewhere.line(`${elsewhere.reference}_x`);
    const sameTenant = await aSplit({ tenant: k.tenant, amount: 700n, lines: () => [] });
    const link = (discrepancyIds: bigint[], postingId = k.postingId) =>
      proposeResolution(k.tenant.id, k.caseId, alice, {
        resolution: "LINK",
        reason: "try this link",
        link: { postingId, discrepancyIds },
      });

    expect(await link([a.id, b.id])).toEqual({
      ok: false,
      reason: "link_unbalanced",
      message: `The lines sum to 99.99 USD; posting #${k.postingId} is 100.00 USD (0.01 USD short): a link must add up exactly`,
    });
    expect(await link([a.id, eur.id])).toMatchObject({
      ok: false,
      reason: "link_unbalanced",
      message: expect.stringContaining("is in EUR; posting"),
    });
    expect(await link([a.id, foreign.id])).toEqual({
      ok: false,
      reason: "invalid_link",
      message: `No settlement line ${foreign.id} in this tenant`,
    });
    expect(await link([a.id, sameTenant.found.discrepancyId!])).toMatchObject({
      ok: false,
      reason: "invalid_link",
      message: expect.stringContaining("only settled lines can be linked"),
    });
    expect(await link([a.id], sameTenant.postingId)).toMatchObject({
      ok: false,
      reason: "invalid_link",
      message: `A link on case ${k.caseId} ties lines to its own posting #${k.postingId}, not #${sameTenant.postingId}`,
    });
    expect(await link([a.id], elsewhere.postingId)).toMatchObject({
      ok: false,
      reason: "invalid_link",
      message: `No posting ${elsewhere.postingId} in this tenant`,
    });
    expect(await link([a.id, a.id])).toMatchObject({
      ok: false,
      reason: "invalid_link",
      message: expect.stringContaining("twice"),
    });
    expect(await link([])).toMatchObject({ ok: false, reason: "invalid_link" });
    expect(
      await proposeResolution(k.tenant.id, k.caseId, alice, { resolution: "LINK", reason: "no records named" }),
    ).toMatchObject({ ok: false, reason: "invalid_link" });

    expect(await prisma.caseProposal.count({ where: { caseId: k.caseId } })).toBe(0);
    expect(await prisma.caseLink.count({ where: { tenantId: k.tenant.id } })).toBe(0);
    expect((await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).status).toBe("OPEN");
    expect(await prisma.auditLog.count({ where: { tenantId: k.tenant.id, action: { startsWith: "case." } } })).toBe(0);
  });

  it("a line resolved after the proposal makes the approval stale: refused, and nothing changes", async () => {
    const k = await aSplit({ amount: 3000n, lines: (ref) => [{ reference: `${ref}_a`, amount: "30.00" }] });
    const a = await k.line(`${k.reference}_a`);
    const p = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "LINK",
      reason: "the provider renamed it",
      link: { postingId: k.postingId, discrepancyIds: [a.id] },
    });
    const proposalId = p.ok ? p.value.proposalId : 0n;
    await prisma.reconDiscrepancy.update({
      where: { id: a.id },
      data: { state: "FETCHED", note: "fetched meanwhile" },
    });
    expect(await decideProposal(k.tenant.id, k.caseId, proposalId, bruno, { decision: "approve" })).toMatchObject({
      ok: false,
      reason: "stale_proposal",
      message: expect.stringContaining("became fetched"),
    });
    expect(await prisma.caseApproval.count({ where: { proposalId } })).toBe(0);
    expect((await prisma.case.findUniqueOrThrow({ where: { id: k.caseId } })).status).toBe("PROPOSED");
    expect((await prisma.reconDiscrepancy.findUniqueOrThrow({ where: { id: k.found.discrepancyId! } })).state).not.toBe(
      "RESOLVED",
    );
  });
});

describe("the database holds a link's four eyes and its sums, against direct SQL", () => {
  async function directSql(statements: [string, unknown[]?][], mode: "commit" | "check" = "commit") {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query("BEGIN");
      for (const [sql, params] of statements) await client.query(sql, params);
      if (mode === "check") {
        await client.query("SET CONSTRAINTS ALL IMMEDIATE");
        await client.query("ROLLBACK");
      } else await client.query("COMMIT");
    } catch (e) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw e;
    } finally {
      await client.end();
    }
  }

  async function proposedLink() {
    const k = await aSplit({
      amount: 10_000n,
      lines: (ref) => [
        { reference: `${ref}_a`, amount: "60.00" },
        { reference: `${ref}_b`, amount: "40.00" },
        { reference: `${ref}_c`, amount: "40.00" },
      ],
    });
    const [a, b, c] = await Promise.all([
      k.line(`${k.reference}_a`),
      k.line(`${k.reference}_b`),
      k.line(`${k.reference}_c`),
    ]);
    const p = await proposeResolution(k.tenant.id, k.caseId, alice, {
      resolution: "LINK",
      reason: "split in two",
      link: { postingId: k.postingId, discrepancyIds: [a.id, b.id] },
    });
    if (!p.ok) throw new Error(p.message);
    return { ...k, a, b, c, proposalId: p.value.proposalId };
  }

  const approve = (proposalId: bigint, proposer: Person, approver: Person): [string, unknown[]] => [
    `INSERT INTO case_approvals (proposal_id, proposer_id, approver_id, approver_label, decision) VALUES ($1, $2, $3, 'direct sql', 'APPROVE')`,
    [String(proposalId), proposer.userId, approver.userId],
  ];
  const carryOut = (k: Awaited<ReturnType<typeof proposedLink>>, lines: bigint[]): [string, unknown[]][] => [
    [
      `UPDATE recon_discrepancies SET state = 'RESOLVED', resolved_at = now(), note = 'by hand' WHERE id = ANY($1::bigint[])`,
      [[...lines, k.found.discrepancyId!].map(String)],
    ],
    [`UPDATE cases SET status = 'RESOLVED', closed_at = now() WHERE id = $1`, [String(k.caseId)]],
    [`UPDATE case_proposals SET status = 'APPROVED', decided_at = now() WHERE id = $1`, [String(k.proposalId)]],
  ];

  it("refuses the proposer approving their own link, even when the domain is bypassed", async () => {
    const k = await proposedLink();
    await expect(directSql([approve(k.proposalId, alice, alice)])).rejects.toThrow(
      /case_approvals_maker_is_not_checker/,
    );
    await expect(directSql([approve(k.proposalId, bruno, alice)])).rejects.toThrow(
      /case_approvals_proposal_id_proposer_id_fkey/,
    );
    // The same approval and carrying out by a different accountant passes (rolled back): the refusals are the rule.
    await expect(
      directSql([approve(k.proposalId, alice, bruno), ...carryOut(k, [k.a.id, k.b.id])], "check"),
    ).resolves.toBeUndefined();
    expect(await prisma.caseApproval.count({ where: { proposalId: k.proposalId } })).toBe(0);
  });

  it("refuses an approved link without its approval, whose lines were not resolved, or whose case stays open", async () => {
    const k = await proposedLink();
    await expect(directSql(carryOut(k, [k.a.id, k.b.id]))).rejects.toThrow(
      /APPROVED with 0 of its 1 required approvals/,
    );
    const [resolveLines, resolveCase, markApproved] = carryOut(k, [k.a.id, k.b.id]);
    await expect(directSql([approve(k.proposalId, alice, bruno), resolveCase!, markApproved!])).rejects.toThrow(
      /case_links_lines_as_linked|is not resolved by it as linked/,
    );
    await expect(directSql([approve(k.proposalId, alice, bruno), resolveLines!, markApproved!])).rejects.toThrow(
      /case_links_resolve_the_case|but case \d+ is/,
    );
  });

  it("refuses a line added to a link after it was proposed, a link whose lines were edited to another sum, and a link proposal with no lines", async () => {
    const k = await proposedLink();
    await expect(
      directSql([
        [
          `INSERT INTO case_links (tenant_id, proposal_id, posting_id, discrepancy_id, amount, currency) VALUES ($1, $2, $3, $4, 4000, 'USD')`,
          [k.tenant.id, String(k.proposalId), String(k.postingId), String(k.c.id)],
        ],
      ]),
    ).rejects.toThrow(/not a link proposed in this transaction/);
    await expect(
      directSql([[`UPDATE case_links SET amount = 5000 WHERE proposal_id = $1`, [String(k.proposalId)]]]),
    ).rejects.toThrow(/append-only/);
    // A line whose amount no longer is what was linked: the sum is checked from the discrepancies and the ledger at commit.
    await expect(
      directSql([
        [`UPDATE recon_discrepancies SET their_amount = 5000 WHERE id = $1`, [String(k.b.id)]],
        approve(k.proposalId, alice, bruno),
        ...carryOut(k, [k.a.id, k.b.id]),
      ]),
    ).rejects.toThrow(/case_links_lines_as_linked|not resolved by it as linked/);
    // A LINK proposal written by hand without lines.
    await expect(
      directSql([
        [
          `INSERT INTO case_proposals (tenant_id, case_id, resolution, reason, proposed_by_id, proposed_by_label, amount, currency, required_approvals)
           SELECT tenant_id, id, 'LINK', 'no lines', $2, 'direct sql', 100, 'USD', 1 FROM cases WHERE id = $1`,
          [String(k.caseId), bruno.userId],
        ],
      ]),
    ).rejects.toThrow(/must name one posting and at least one line/);
  });

  it("refuses an approved link whose lines, as linked, do not sum to the posting", async () => {
    // Written by hand in one transaction, proposal and lines together (as the trigger allows): 60 + 40 + 40 ≠ 100.
    const k = await aSplit({
      amount: 10_000n,
      lines: (ref) => [
        { reference: `${ref}_a`, amount: "60.00" },
        { reference: `${ref}_b`, amount: "40.00" },
        { reference: `${ref}_c`, amount: "40.00" },
      ],
    });
    const lines = await Promise.all(["_a", "_b", "_c"].map((s) => k.line(`${k.reference}${s}`)));
    const byHand = (ls: typeof lines): [string, unknown[]?][] => [
      [
        `INSERT INTO case_proposals (tenant_id, case_id, resolution, reason, proposed_by_id, proposed_by_label, amount, currency, required_approvals)
         SELECT tenant_id, id, 'LINK', 'by hand', $2, 'direct sql', 10000, 'USD', 1 FROM cases WHERE id = $1`,
        [String(k.caseId), alice.userId],
      ],
      ...ls.map((l): [string, unknown[]] => [
        `INSERT INTO case_links (tenant_id, proposal_id, posting_id, discrepancy_id, amount, currency) VALUES ($1, currval('case_proposals_id_seq'), $2, $3, $4, 'USD')`,
        [k.tenant.id, String(k.postingId), String(l.id), String(l.theirAmount)],
      ]),
      [
        `INSERT INTO case_approvals (proposal_id, proposer_id, approver_id, approver_label, decision) VALUES (currval('case_proposals_id_seq'), $1, $2, 'direct sql', 'APPROVE')`,
        [alice.userId, bruno.userId],
      ],
      [
        `UPDATE recon_discrepancies SET state = 'RESOLVED', resolved_at = now(), note = 'by hand' WHERE id = ANY($1::bigint[])`,
        [[...ls.map((l) => l.id), k.found.discrepancyId!].map(String)],
      ],
      [`UPDATE cases SET status = 'RESOLVED', closed_at = now() WHERE id = $1`, [String(k.caseId)]],
      [`UPDATE case_proposals SET status = 'APPROVED', decided_at = now() WHERE id = currval('case_proposals_id_seq')`],
    ];
    await expect(directSql(byHand(lines))).rejects.toThrow(
      /case_links_sum_to_the_posting|its lines sum to 14000 USD, and posting/,
    );
    // Two of them, 60 + 40, do sum: accepted (rolled back).
    await expect(directSql(byHand(lines.slice(0, 2)), "check")).resolves.toBeUndefined();
    expect(await prisma.caseLink.count({ where: { tenantId: k.tenant.id } })).toBe(0);
  });
});
