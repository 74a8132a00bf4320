// Cases: the discrepancies only a person may decide (ours-not-theirs and
// mismatches), their evidence side by side, and four-eyes decisions on them.
//
//   OPEN ──propose──► PROPOSED ──approved──► RESOLVED   (correct: a CORRECTION posting)
//     ▲                  │                 ► WAITING    (timing: the next run covering it decides)
//     └────rejected──────┘                 ► ESCALATED  (ours is right: escalated to the provider)
//                                         ► RESOLVED   (link: these settlement lines together are our posting)
//   WAITING ──next run still finds it──► OPEN           any open state ──a run matches it──► RESOLVED
//
// One accountant proposes; a different one approves (two different ones when the
// amount at stake is above TALLY_CASE_SECOND_APPROVAL_ABOVE). The database holds
// the same rule (case_approvals: composite FK to the real proposer, CHECK approver
// <> proposer). Approval writes the correction posting, the case's new state and
// the audit entry in one transaction. The ledger is never edited: a correction is
// a new posting with the corrected posting's provider and reference, through the
// same clearing and customer accounts, so reconciliation nets it with the original.
import { recordAudit } from "@/lib/admin/audit";
import { config } from "@/lib/platform/config";
import { Prisma, prisma, type Tx } from "@/lib/platform/db";
import { shownDelivery } from "@/lib/views/event-signatures";
import type { CaseKind, CaseResolution, CaseStatus, Provider } from "@/lib/generated/prisma/enums";
import { writePosting, type Leg } from "@/lib/ledger/postings";
import type { DomainResult } from "@/lib/platform/refusal";
import { conflictStake, correctionStake, discrepancyStake, type Stake } from "@/lib/cases/stake";
import { CASE_KIND_LABEL, CORRECTION_REASONS } from "@/lib/cases/labels";
import {
  carryOutLink,
  LINKABLE_KINDS,
  linkCandidates,
  planLink,
  writeLinks,
  type LinkInput,
  type LinkPlan,
} from "@/lib/cases/link";
import { ageBucketOf, ageInDays } from "@/lib/cases/aging";
import { assignablePeople } from "@/lib/cases/people";
import { isOverdue } from "@/lib/cases/due";

/** A signed-in person: four-eyes is about people, so API tokens cannot decide cases. */
export type Person = { userId: string; label: string };

export const CASE_RESOLUTIONS: readonly CaseResolution[] = ["TIMING", "ESCALATE", "CORRECT", "LINK"];

// The reason codes and their labels are shared with the client: lib/cases/labels.ts.
export { CORRECTION_REASONS };

/** Which resolutions make sense for a kind of case. */
export function resolutionsFor(kind: CaseKind): CaseResolution[] {
  // A conflict posts nothing by itself (it was never posted): accountants take it up
  // with the provider; a mismatch is on both sides: it cannot be a timing difference.
  if (kind === "CONFLICT") return ["ESCALATE"];
  // A payout's residual and a missing bank credit are the provider's (or the bank's) to explain: nothing of ours to reverse.
  if (kind === "PAYOUT_RESIDUAL" || kind === "BANK_UNMATCHED") return ["TIMING", "ESCALATE"];
  const decisions: CaseResolution[] =
    kind === "OURS_NOT_THEIRS" ? ["TIMING", "ESCALATE", "CORRECT"] : ["ESCALATE", "CORRECT"];
  return LINKABLE_KINDS.includes(kind) ? [...decisions, "LINK"] : decisions;
}

export const OPEN_STATUSES: readonly CaseStatus[] = ["OPEN", "PROPOSED", "WAITING", "ESCALATED"];

// ---------------------------------------------------------------------------
// The correction plan: computed from the ledger when proposed, stored with the
// proposal, shown before submitting, and posted exactly as shown on approval.
// ---------------------------------------------------------------------------

export type PlannedLeg = {
  accountId: string;
  accountCode: string;
  accountKind: string;
  amount: string;
  currency: string;
};

export type CorrectionPlan = {
  reversesPostingId: string;
  provider: Provider;
  reference: string;
  description: string;
  legs: PlannedLeg[];
  /** Our net on the clearing account per currency when planned; approval refuses if the ledger moved since. */
  basis: Record<string, string>;
  /** What the net becomes: nothing (reversal) or the provider's amount (adjustment). */
  target: Record<string, string>;
};

export type CaseRow = {
  id: bigint;
  tenant_id: string;
  discrepancy_id: bigint | null;
  conflict_id: bigint | null;
  kind: CaseKind;
  status: CaseStatus;
};

/** The subject of a case: its discrepancy's provider and reference, or its conflict's. */
async function caseSubject(tx: Tx, c: CaseRow): Promise<{ provider: Provider; reference: string }> {
  if (c.discrepancy_id !== null)
    return tx.reconDiscrepancy.findUniqueOrThrow({
      where: { id: c.discrepancy_id },
      select: { provider: true, reference: true },
    });
  return tx.claimConflict.findUniqueOrThrow({
    where: { id: c.conflict_id! },
    select: { provider: true, reference: true },
  });
}

/** What a decision without a correction has at stake: our amount or theirs; for a conflict, the larger of the two amounts in dispute. */
async function caseStake(tx: Tx, c: CaseRow): Promise<Stake> {
  if (c.discrepancy_id !== null) {
    const d = await tx.reconDiscrepancy.findUniqueOrThrow({ where: { id: c.discrepancy_id } });
    return discrepancyStake(d) ?? { amount: 0n, currency: "XXX" };
  }
  const k = await tx.claimConflict.findUniqueOrThrow({ where: { id: c.conflict_id! } });
  return conflictStake([k.claimed, k.delivered] as { amount?: string; currency?: string }[]);
}

/** The case row, locked for the rest of the transaction: the one lock every change to a case takes. */
export async function lockCase(tx: Tx, tenantId: string, caseId: bigint): Promise<CaseRow | null> {
  const rows = await tx.$queryRaw<CaseRow[]>(Prisma.sql`
    SELECT id, tenant_id::text, discrepancy_id, conflict_id, kind, status FROM cases WHERE id = ${caseId} AND tenant_id = ${tenantId}::uuid FOR UPDATE`);
  return rows[0] ?? null;
}

/** Our net per currency on the provider's clearing account for one reference: the same sum reconciliation compares. */
async function clearingNet(
  db: Tx,
  tenantId: string,
  provider: Provider,
  reference: string,
): Promise<Record<string, bigint>> {
  const rows = await db.$queryRaw<{ currency: string; total: bigint }[]>(Prisma.sql`
    SELECT e.currency, sum(e.amount)::bigint AS total
    FROM postings p JOIN ledger_entries e ON e.posting_id = p.id JOIN accounts a ON a.id = e.account_id AND a.kind = 'PROVIDER_CLEARING'
    WHERE p.tenant_id = ${tenantId}::uuid AND p.provider = ${provider}::"Provider" AND p.provider_reference = ${reference}
    GROUP BY e.currency`);
  return Object.fromEntries(rows.filter((r) => r.total !== 0n).map((r) => [r.currency.trim(), r.total]));
}

const stringify = (m: Record<string, bigint>) =>
  Object.fromEntries(
    Object.entries(m)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, v.toString()]),
  );

/**
 * The posting that makes our net for the reference equal to the provider's:
 * nothing for ours-not-theirs (a reversal), their amount for a mismatch (an
 * adjustment; in another currency, our amount is reversed and theirs posted).
 * Legs go through the corrected posting's own clearing and customer accounts.
 */
export async function planCorrection(db: Tx, tenantId: string, caseId: bigint): Promise<DomainResult<CorrectionPlan>> {
  const c = await db.case.findFirst({ where: { id: caseId, tenantId }, include: { discrepancy: true } });
  if (!c) return { ok: false, reason: "not_found", message: `No case ${caseId} in this tenant` };
  const d = c.discrepancy;
  if (!d)
    return {
      ok: false,
      reason: "no_posting",
      message: `Case ${caseId} is a conflict: nothing of it was posted, so there is nothing to correct`,
    };
  if (!d.postingId)
    return { ok: false, reason: "no_posting", message: `Case ${caseId} has no posting of ours to correct` };
  const original = await db.posting.findFirst({
    where: { id: d.postingId, tenantId },
    include: { entries: { include: { account: true } } },
  });
  if (!original) return { ok: false, reason: "no_posting", message: `Posting ${d.postingId} is not in this tenant` };
  const clearing = original.entries.find((e) => e.account.kind === "PROVIDER_CLEARING")?.account;
  const customer = original.entries.find((e) => e.account.kind === "CUSTOMER")?.account;
  if (!clearing || !customer)
    return {
      ok: false,
      reason: "no_posting",
      message: `Posting ${original.id} has no clearing and customer legs to correct`,
    };

  const basis = await clearingNet(db, tenantId, d.provider, d.reference);
  const target: Record<string, bigint> =
    c.kind === "MISMATCH" && d.theirAmount !== null && d.theirCurrency
      ? { [d.theirCurrency.trim()]: d.theirAmount }
      : {};
  const legs: PlannedLeg[] = [];
  for (const currency of [...new Set([...Object.keys(basis), ...Object.keys(target)])].sort()) {
    const delta = (target[currency] ?? 0n) - (basis[currency] ?? 0n);
    if (delta === 0n) continue;
    // Clearing is debit-normal (the provider owes us), customer credit-normal: a payment debits clearing, credits the customer.
    legs.push({
      accountId: clearing.id.toString(),
      accountCode: clearing.code,
      accountKind: clearing.kind,
      amount: delta.toString(),
      currency,
    });
    legs.push({
      accountId: customer.id.toString(),
      accountCode: customer.code,
      accountKind: customer.kind,
      amount: (-delta).toString(),
      currency,
    });
  }
  const description =
    c.kind === "OURS_NOT_THEIRS"
      ? `Correction (case #${c.id}): reverses posting #${original.id}; ${d.provider} has no record of ${d.reference}`
      : `Correction (case #${c.id}): adjusts ${d.reference} to the amount ${d.provider} settled`;
  return {
    ok: true,
    value: {
      reversesPostingId: original.id.toString(),
      provider: d.provider,
      reference: d.reference,
      description,
      legs,
      basis: stringify(basis),
      target: stringify(target),
    },
  };
}

// ---------------------------------------------------------------------------
// Proposing
// ---------------------------------------------------------------------------

export type ProposalInput = {
  resolution: CaseResolution;
  reasonCode?: string | null;
  reason: string;
  /** For LINK: the posting and the settlement lines that together are it. */
  link?: LinkInput | null;
};
export type Proposed = {
  proposalId: bigint;
  requiredApprovals: number;
  amount: bigint;
  currency: string;
  plan: CorrectionPlan | null;
  link: LinkPlan | null;
};

export function requiredApprovalsFor(amount: bigint): 1 | 2 {
  return amount > BigInt(config().TALLY_CASE_SECOND_APPROVAL_ABOVE) ? 2 : 1;
}

/** The state a case returns to when a proposal on it is rejected: escalated stays escalated. */
async function settledStatus(tx: Tx, caseId: bigint): Promise<"OPEN" | "ESCALATED"> {
  const escalated = await tx.caseProposal.count({ where: { caseId, resolution: "ESCALATE", status: "APPROVED" } });
  return escalated > 0 ? "ESCALATED" : "OPEN";
}

export async function proposeResolution(
  tenantId: string,
  caseId: bigint,
  proposer: Person,
  input: ProposalInput,
): Promise<DomainResult<Proposed>> {
  const reason = input.reason.trim();
  if (reason.length < 3)
    return {
      ok: false,
      reason: "reason_required",
      message: "Say why, in a few words: the checker and the audit log read it",
    };
  return prisma.$transaction(async (tx): Promise<DomainResult<Proposed>> => {
    const c = await lockCase(tx, tenantId, caseId);
    if (!c) return { ok: false, reason: "not_found", message: `No case ${caseId} in this tenant` };
    if (c.status !== "OPEN" && c.status !== "ESCALATED") {
      const why =
        c.status === "PROPOSED"
          ? "it already has a proposal waiting for approval"
          : c.status === "WAITING"
            ? "it waits for the next reconciliation run"
            : "it is resolved";
      return { ok: false, reason: "not_open", message: `Case ${caseId} cannot take a proposal: ${why}` };
    }
    if (!resolutionsFor(c.kind).includes(input.resolution)) {
      return {
        ok: false,
        reason: "invalid_resolution",
        message: `A case of kind ${CASE_KIND_LABEL[c.kind]} cannot be resolved as ${input.resolution.toLowerCase()}`,
      };
    }
    let plan: CorrectionPlan | null = null;
    let link: LinkPlan | null = null;
    let stake: Stake;
    if (input.resolution === "LINK") {
      if (!input.link)
        return {
          ok: false,
          reason: "invalid_link",
          message: "Name the posting and the settlement lines that together are it",
        };
      const planned = await planLink(tx, tenantId, c, input.link);
      if (!planned.ok) return planned;
      link = planned.value;
      stake = { amount: link.amount < 0n ? -link.amount : link.amount, currency: link.currency };
    } else if (input.resolution === "CORRECT") {
      const code = CORRECTION_REASONS.find((r) => r.code === input.reasonCode && r.kinds.includes(c.kind));
      if (!code)
        return {
          ok: false,
          reason: "reason_code_required",
          message: `Choose a reason code for the correction (${CORRECTION_REASONS.filter((r) =>
            r.kinds.includes(c.kind),
          )
            .map((r) => r.code)
            .join(", ")})`,
        };
      const planned = await planCorrection(tx, tenantId, caseId);
      if (!planned.ok) return planned;
      if (planned.value.legs.length === 0)
        return {
          ok: false,
          reason: "nothing_to_correct",
          message: "Our ledger already agrees with the provider for this reference: there is nothing to correct",
        };
      plan = planned.value;
      stake = correctionStake(plan.legs);
    } else {
      stake = await caseStake(tx, c);
    }
    const requiredApprovals = requiredApprovalsFor(stake.amount);
    const proposal = await tx.caseProposal.create({
      data: {
        tenantId,
        caseId,
        resolution: input.resolution,
        reasonCode: input.resolution === "CORRECT" ? input.reasonCode! : null,
        reason,
        proposedById: proposer.userId,
        proposedByLabel: proposer.label,
        correction: plan ? (plan as unknown as Prisma.InputJsonValue) : undefined,
        amount: stake.amount,
        currency: stake.currency,
        requiredApprovals,
      },
      select: { id: true },
    });
    if (link) await writeLinks(tx, tenantId, proposal.id, link);
    await tx.case.update({ where: { id: caseId }, data: { status: "PROPOSED" } });
    await recordAudit(tx, {
      actor: { type: "USER", id: proposer.userId, label: proposer.label },
      action: "case.propose",
      subjectType: "case",
      subjectId: String(caseId),
      tenantId,
      reason,
      details: {
        proposalId: proposal.id,
        resolution: input.resolution,
        reasonCode: input.reasonCode ?? null,
        amount: stake.amount,
        currency: stake.currency,
        requiredApprovals,
        legs: plan?.legs.map((l) => `${l.accountCode} ${l.amount} ${l.currency}`) ?? [],
        ...(link && {
          link: {
            postingId: link.postingId,
            lines: link.lines.map((l) => `#${l.discrepancyId} ${l.reference} ${l.amount} ${l.currency}`),
          },
        }),
      },
    });
    return {
      ok: true,
      value: { proposalId: proposal.id, requiredApprovals, amount: stake.amount, currency: stake.currency, plan, link },
    };
  });
}

// ---------------------------------------------------------------------------
// Approving and rejecting
// ---------------------------------------------------------------------------

export type Decision = { decision: "approve" | "reject"; reason?: string | null };
export type Decided =
  | { outcome: "rejected"; status: CaseStatus }
  | { outcome: "awaiting_approval"; approvals: number; required: number }
  | { outcome: "carried_out"; resolution: CaseResolution; status: CaseStatus; postingId: bigint | null };

const RESOLUTION_WORDS: Record<CaseResolution, string> = {
  TIMING: "timing difference",
  ESCALATE: "escalated to the provider",
  CORRECT: "corrected",
  LINK: "linked",
};

export async function decideProposal(
  tenantId: string,
  caseId: bigint,
  proposalId: bigint,
  checker: Person,
  input: Decision,
): Promise<DomainResult<Decided>> {
  const reason = input.reason?.trim() || null;
  if (input.decision === "reject" && (!reason || reason.length < 3))
    return { ok: false, reason: "reason_required", message: "Say why the proposal is rejected" };
  return prisma.$transaction(async (tx): Promise<DomainResult<Decided>> => {
    // The case row is the lock: two checkers approving at once take turns.
    const c = await lockCase(tx, tenantId, caseId);
    if (!c) return { ok: false, reason: "not_found", message: `No case ${caseId} in this tenant` };
    const p = await tx.caseProposal.findFirst({
      where: { id: proposalId, caseId, tenantId },
      include: { approvals: true },
    });
    if (!p) return { ok: false, reason: "not_found", message: `No proposal ${proposalId} on case ${caseId}` };
    if (p.status !== "PENDING" || c.status !== "PROPOSED")
      return {
        ok: false,
        reason: "not_pending",
        message: `Proposal ${proposalId} is ${p.status.toLowerCase()}: there is nothing to decide`,
      };
    if (p.proposedById === checker.userId)
      return {
        ok: false,
        reason: "own_proposal",
        message: "Four eyes: you proposed this, so a different accountant must approve or reject it",
      };
    if (p.approvals.some((a) => a.approverId === checker.userId))
      return {
        ok: false,
        reason: "already_decided",
        message: "You have already approved this proposal; it needs a different second approver",
      };
    const actor = { type: "USER" as const, id: checker.userId, label: checker.label };
    const now = new Date();
    // Each decision is one approval row (four eyes counts them) and one audit entry on the case.
    const recordDecision = (decision: "APPROVE" | "REJECT") =>
      tx.caseApproval.create({
        data: {
          proposalId,
          proposerId: p.proposedById,
          approverId: checker.userId,
          approverLabel: checker.label,
          decision,
          reason,
        },
      });
    const audit = (action: "case.approve" | "case.reject", details: Record<string, unknown>, why = reason) =>
      recordAudit(tx, {
        actor,
        action,
        subjectType: "case",
        subjectId: String(caseId),
        tenantId,
        reason: why,
        details,
      });

    if (input.decision === "reject") {
      await recordDecision("REJECT");
      await tx.caseProposal.update({ where: { id: proposalId }, data: { status: "REJECTED", decidedAt: now } });
      const status = await settledStatus(tx, caseId);
      await tx.case.update({ where: { id: caseId }, data: { status } });
      await audit("case.reject", { proposalId, resolution: p.resolution, proposedBy: p.proposedByLabel });
      return { ok: true, value: { outcome: "rejected", status } };
    }

    const approvals = p.approvals.filter((a) => a.decision === "APPROVE").length + 1;
    const completes = approvals >= p.requiredApprovals;
    let plan: CorrectionPlan | null = null;
    if (completes && p.resolution === "CORRECT") {
      plan = p.correction as unknown as CorrectionPlan;
      // The plan was computed from the ledger as it was; a correction posted since would be doubled.
      const current = stringify(await clearingNet(tx, tenantId, plan.provider, plan.reference));
      if (JSON.stringify(current) !== JSON.stringify(plan.basis)) {
        return {
          ok: false,
          reason: "stale_proposal",
          message: `The ledger for ${plan.reference} changed since this was proposed; reject this proposal and propose again from the current ledger`,
        };
      }
    }
    // Checked before the approval row is written: a refusal returned from this callback still commits.
    const linked = completes && p.resolution === "LINK" ? await carryOutLink(tx, tenantId, c, proposalId, now) : null;
    if (linked && !linked.ok) return linked;
    await recordDecision("APPROVE");
    if (!completes) {
      await audit("case.approve", {
        proposalId,
        resolution: p.resolution,
        approvals,
        required: p.requiredApprovals,
        proposedBy: p.proposedByLabel,
      });
      return { ok: true, value: { outcome: "awaiting_approval", approvals, required: p.requiredApprovals } };
    }

    let postingId: bigint | null = null;
    let status: CaseStatus;
    const approvers = [
      ...p.approvals.filter((a) => a.decision === "APPROVE").map((a) => a.approverLabel),
      checker.label,
    ];
    const who = `proposed by ${p.proposedByLabel}, approved by ${approvers.join(" and ")}`;
    const d = await caseSubject(tx, c);
    if (p.resolution === "CORRECT") {
      const legs: Leg[] = plan!.legs.map((l) => ({
        accountId: BigInt(l.accountId),
        amount: BigInt(l.amount),
        currency: l.currency,
      }));
      postingId = await writePosting(tx, {
        tenantId,
        kind: "CORRECTION",
        provider: plan!.provider,
        providerReference: plan!.reference,
        reversesPostingId: BigInt(plan!.reversesPostingId),
        description: plan!.description,
        occurredAt: now,
        legs,
      });
      status = "RESOLVED";
      await tx.case.update({
        where: { id: caseId },
        data: { status, closedAt: now, resolution: `corrected by posting #${postingId} (${who})` },
      });
      if (c.discrepancy_id !== null)
        await tx.reconDiscrepancy.update({
          where: { id: c.discrepancy_id },
          data: { state: "RESOLVED", resolvedAt: now, note: `corrected by posting #${postingId} (case #${caseId})` },
        });
    } else if (linked?.ok) {
      status = "RESOLVED";
      await tx.case.update({
        where: { id: caseId },
        data: { status, closedAt: now, resolution: `${linked.value.note} (${who})` },
      });
    } else if (p.resolution === "TIMING") {
      status = "WAITING";
      await tx.case.update({
        where: { id: caseId },
        data: {
          status,
          waitingSince: now,
          resolution: `timing difference (${who}): the next run covering it re-checks`,
        },
      });
    } else {
      status = "ESCALATED";
      await tx.case.update({
        where: { id: caseId },
        data: { status, resolution: `ours confirmed valid, escalated to ${d.provider} (${who})` },
      });
    }
    await tx.caseProposal.update({
      where: { id: proposalId },
      data: { status: "APPROVED", decidedAt: now, postingId },
    });
    await audit(
      "case.approve",
      {
        proposalId,
        resolution: p.resolution,
        outcome: RESOLUTION_WORDS[p.resolution],
        approvals,
        required: p.requiredApprovals,
        proposedBy: p.proposedByLabel,
        postingId,
        reference: d.reference,
        ...(linked?.ok && {
          link: { postingId: linked.value.postingId, lines: linked.value.lines, note: linked.value.note },
        }),
      },
      reason ?? p.reason,
    );
    return { ok: true, value: { outcome: "carried_out", resolution: p.resolution, status, postingId } };
  });
}

// ---------------------------------------------------------------------------
// Reading one case with its evidence side by side (the list: lib/cases/list.ts).
// ---------------------------------------------------------------------------

/** Who works it, when it is due, whether it is snoozed, and who it can be given to: the same for every kind. */
async function caseWork(
  tenantId: string,
  c: { openedAt: Date; closedAt: Date | null; dueAt: Date | null; snoozedUntil: Date | null; status: CaseStatus },
  now: Date,
) {
  const open = c.closedAt === null;
  return {
    now,
    ageDays: open ? ageInDays(c.openedAt, now) : null,
    ageBucket: open ? ageBucketOf(c.openedAt, now) : null,
    overdue: isOverdue(c, now),
    snoozed: open && c.status !== "PROPOSED" && c.snoozedUntil !== null && c.snoozedUntil > now,
    people: open ? await assignablePeople(tenantId) : [],
  };
}

export async function getCase(tenantId: string, caseId: bigint, now = new Date()) {
  const c = await prisma.case.findFirst({
    where: { id: caseId, tenantId },
    include: {
      discrepancy: true,
      assignee: { select: { id: true, email: true, name: true } },
      proposals: {
        orderBy: { id: "asc" },
        include: {
          approvals: { orderBy: { id: "asc" } },
          links: { orderBy: { id: "asc" }, include: { discrepancy: { select: { reference: true, day: true } } } },
        },
      },
    },
  });
  if (!c) return null;
  const work = await caseWork(tenantId, c, now);
  const conflict = c.conflictId !== null ? await conflictEvidence(tenantId, c.conflictId) : null;
  const d = c.discrepancy;
  if (!d) return { ...(await conflictCaseDetail(tenantId, c)), conflict, case: c, work, linkable: null };
  // Ours: every posting of the reference (the original and any corrections), with legs.
  const postings = await prisma.posting.findMany({
    where: { tenantId, provider: d.provider, providerReference: d.reference },
    orderBy: { id: "asc" },
    include: {
      entries: { orderBy: { id: "asc" }, include: { account: { select: { id: true, code: true, kind: true } } } },
      processedEvent: { select: { rawEventId: true } },
    },
  });
  const original = postings.find((p) => p.id === d.postingId) ?? postings.find((p) => p.kind !== "CORRECTION") ?? null;
  // The raw webhook behind our posting, exactly as received.
  const rawEventId = original?.processedEvent?.rawEventId ?? d.rawEventId;
  const raw = rawEventId ? await prisma.rawEvent.findFirst({ where: { id: rawEventId, tenantId } }) : null;
  const runIds = [...new Set([d.firstRunId, d.lastRunId])];
  const runs = await prisma.reconRun.findMany({
    where: { id: { in: runIds }, tenantId },
    select: { id: true, windowFrom: true, windowTo: true, source: true, sourceName: true, startedAt: true },
  });
  const decidable = OPEN_STATUSES.includes(c.status) && c.status !== "PROPOSED" && c.status !== "WAITING";
  const plan = decidable ? await planCorrection(prisma, tenantId, caseId) : null;
  return {
    case: c,
    work,
    // The lines a link could take, when the case can take a proposal.
    linkable: decidable ? await linkCandidates(prisma, tenantId, caseId) : null,
    conflict,
    postings,
    raw: raw && {
      id: raw.id,
      provider: raw.provider,
      source: raw.source,
      status: raw.status,
      eventType: raw.eventType,
      deliveryId: raw.deliveryId,
      receivedAt: raw.receivedAt,
      // Evidence shows the body, never a signature inside it (Adyen's hmacSignature).
      body: shownDelivery(raw).body.text,
      bytes: raw.rawBody?.length ?? null,
      bodyPurgedAt: raw.bodyPurgedAt,
    },
    theirs: d.theirLine as { row: number; format: string; header: string[] | null; line: string } | null,
    runs,
    plan: plan?.ok ? plan.value : null,
    resolutions: resolutionsFor(c.kind),
    reasonCodes: CORRECTION_REASONS.filter((r) => r.kinds.includes(c.kind)).map(({ code, label }) => ({ code, label })),
    secondApprovalAbove: BigInt(config().TALLY_CASE_SECOND_APPROVAL_ABOVE),
  };
}

export type CaseDetail = NonNullable<Awaited<ReturnType<typeof getCase>>>;

/**
 * A conflict's evidence: the delivery that won the claim and the one that disagrees
 * with it, both exactly as received, side by side; for an over-refund, the payment's
 * and every refund's deliveries.
 */
async function conflictEvidence(tenantId: string, conflictId: bigint) {
  const k = await prisma.claimConflict.findFirstOrThrow({
    where: { id: conflictId, tenantId },
    include: { processedEvent: { select: { rawEventId: true, providerReference: true } } },
  });
  const rawIds = [
    k.processedEvent.rawEventId,
    k.rawEventId,
    ...((k.claimed as { rawEventIds?: string[] }).rawEventIds ?? []).map(BigInt),
  ];
  const raws = await prisma.rawEvent.findMany({
    where: { id: { in: [...new Set(rawIds)] }, tenantId },
    orderBy: { id: "asc" },
  });
  return {
    id: k.id,
    kind: k.kind,
    provider: k.provider,
    reference: k.reference,
    detectedAt: k.detectedAt,
    claimed: k.claimed as Record<string, unknown>,
    delivered: k.delivered as Record<string, unknown>,
    raws: raws.map((r) => ({
      id: r.id,
      status: r.status,
      eventType: r.eventType,
      receivedAt: r.receivedAt,
      body: shownDelivery(r).body.text,
      bytes: r.rawBody?.length ?? null,
      bodyPurgedAt: r.bodyPurgedAt,
      conflicting: r.id === k.rawEventId,
    })),
  };
}

/** getCase's answer for a conflict case: no settlement line and no run; the ledger of the reference as it stands. */
async function conflictCaseDetail(tenantId: string, c: { kind: CaseKind; conflictId: bigint | null }) {
  const k = await prisma.claimConflict.findFirstOrThrow({ where: { id: c.conflictId!, tenantId } });
  const postings = await prisma.posting.findMany({
    where: { tenantId, provider: k.provider, providerReference: k.reference },
    orderBy: { id: "asc" },
    include: {
      entries: { orderBy: { id: "asc" }, include: { account: { select: { id: true, code: true, kind: true } } } },
      processedEvent: { select: { rawEventId: true } },
    },
  });
  return {
    postings,
    raw: null,
    theirs: null,
    runs: [] as {
      id: bigint;
      windowFrom: Date;
      windowTo: Date;
      source: string;
      sourceName: string | null;
      startedAt: Date;
    }[],
    plan: null,
    resolutions: resolutionsFor(c.kind),
    reasonCodes: [] as { code: string; label: string }[],
    secondApprovalAbove: BigInt(config().TALLY_CASE_SECOND_APPROVAL_ABOVE),
  };
}
