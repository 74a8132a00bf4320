// Manual links, N:1: "these settlement lines together are our posting" — a
// split payment the provider settled as two lines under other references, or a
// mismatch whose missing part the provider reported under another reference.
// A link is a proposal like any other (resolution LINK): one accountant proposes
// it with a reason, a different one approves (two above the threshold), and the
// database holds both the four eyes (case_approvals) and the sums (the
// case_proposals_link_guard trigger, at commit). Approved, it posts nothing: the
// case is resolved, and the case's discrepancy and every linked line are
// RESOLVED with a note naming the link.
//
// The one side is always the case's own posting; the N sides are discrepancies
// that carry a provider's line (their_amount): the case's own, for a mismatch,
// and theirs-not-ours lines nobody else has settled (OPEN or FETCH_FAILED; a
// FETCHED line is being posted from its event and would count twice).
import type { CaseKind, Provider } from "@/lib/generated/prisma/enums";
import { Prisma, type Tx } from "@/lib/platform/db";
import type { DomainResult } from "@/lib/platform/refusal";
import { toDecimalText } from "@/lib/ledger/money";

export type LinkInput = { postingId: bigint; discrepancyIds: readonly bigint[] };

export type LinkLine = { discrepancyId: bigint; reference: string; amount: bigint; currency: string };

/** The link as proposed: the posting, its movement on the provider's clearing account, and the lines that make it up. */
export type LinkPlan = {
  postingId: bigint;
  provider: Provider;
  reference: string;
  amount: bigint;
  currency: string;
  lines: LinkLine[];
};

/** Kinds a link can resolve: a posting of ours the provider reported otherwise. */
export const LINKABLE_KINDS: readonly CaseKind[] = ["OURS_NOT_THEIRS", "MISMATCH"];

/** At most this many lines in one link: a split payment, not a batch. */
export const MAX_LINK_LINES = 50;

type LinkedCase = { id: bigint; kind: CaseKind; discrepancy_id: bigint | null };

const money = (amount: bigint, currency: string) => `${toDecimalText(amount, currency)} ${currency}`;

/** The posting's own movement on its provider's clearing account, per currency (its legs, not the reference's net). */
async function clearingMovement(db: Tx, postingId: bigint): Promise<{ currency: string; amount: bigint }[]> {
  const rows = await db.$queryRaw<{ currency: string; amount: bigint }[]>(Prisma.sql`
    SELECT e.currency, sum(e.amount)::bigint AS amount
    FROM ledger_entries e JOIN accounts a ON a.id = e.account_id AND a.kind = 'PROVIDER_CLEARING'
    WHERE e.posting_id = ${postingId} GROUP BY e.currency`);
  return rows.filter((r) => r.amount !== 0n).map((r) => ({ currency: r.currency.trim(), amount: r.amount }));
}

/** Checks the records of a link against the case and the ledger; the plan, or the refusal that names the problem. */
export async function planLink(
  db: Tx,
  tenantId: string,
  c: LinkedCase,
  input: LinkInput,
): Promise<DomainResult<LinkPlan>> {
  const ids = input.discrepancyIds;
  if (ids.length === 0)
    return { ok: false, reason: "invalid_link", message: "Choose at least one settlement line to link" };
  if (ids.length > MAX_LINK_LINES)
    return { ok: false, reason: "invalid_link", message: `At most ${MAX_LINK_LINES} lines in one link` };
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice !== undefined)
    return { ok: false, reason: "invalid_link", message: `Line ${twice} is listed twice: each line counts once` };

  const own =
    c.discrepancy_id === null ? null : await db.reconDiscrepancy.findUnique({ where: { id: c.discrepancy_id } });
  if (!own?.postingId)
    return { ok: false, reason: "no_posting", message: `Case ${c.id} has no posting of ours to link lines to` };
  const posting = await db.posting.findFirst({ where: { id: input.postingId, tenantId } });
  if (!posting) return { ok: false, reason: "invalid_link", message: `No posting ${input.postingId} in this tenant` };
  if (posting.id !== own.postingId)
    return {
      ok: false,
      reason: "invalid_link",
      message: `A link on case ${c.id} ties lines to its own posting #${own.postingId}, not #${posting.id}`,
    };
  const movement = await clearingMovement(db, posting.id);
  if (movement.length !== 1)
    return {
      ok: false,
      reason: "invalid_link",
      message: `Posting #${posting.id} does not move one amount in one currency on the provider's clearing account`,
    };
  const { amount, currency } = movement[0]!;

  const found = await db.reconDiscrepancy.findMany({
    where: { tenantId, id: { in: [...ids] } },
    include: { case: true },
  });
  const lines: LinkLine[] = [];
  for (const id of ids) {
    const d = found.find((x) => x.id === id);
    if (!d) return { ok: false, reason: "invalid_link", message: `No settlement line ${id} in this tenant` };
    const name = `Line ${id} (${d.reference})`;
    if (d.provider !== posting.provider)
      return {
        ok: false,
        reason: "invalid_link",
        message: `${name} is ${d.provider}'s; posting #${posting.id} is ${posting.provider}'s`,
      };
    if (d.theirAmount === null || !d.theirCurrency)
      return {
        ok: false,
        reason: "invalid_link",
        message: `${name} has no line of the provider's (it is ours, not theirs): only settled lines can be linked`,
      };
    if (d.id !== own.id) {
      if (d.case)
        return {
          ok: false,
          reason: "invalid_link",
          message: `${name} is case #${d.case.id}'s to decide: link it from there`,
        };
      if (d.bucket !== "THEIRS_NOT_OURS")
        return { ok: false, reason: "invalid_link", message: `${name} is not a settlement line to link` };
      if (d.state === "RESOLVED")
        return { ok: false, reason: "invalid_link", message: `${name} is already resolved: ${d.note ?? "no note"}` };
      if (d.state === "FETCHED" || d.state === "IN_FLIGHT")
        return {
          ok: false,
          reason: "invalid_link",
          message: `${name} is being posted from its own event (${d.state.toLowerCase().replace("_", " ")}): linking it would count it twice`,
        };
    }
    const theirCurrency = d.theirCurrency.trim();
    if (theirCurrency !== currency)
      return {
        ok: false,
        reason: "link_unbalanced",
        message: `${name} is in ${theirCurrency}; posting #${posting.id} is in ${currency}: a link is in one currency`,
      };
    lines.push({ discrepancyId: d.id, reference: d.reference, amount: d.theirAmount, currency });
  }
  const pending = await db.caseLink.findFirst({
    where: { tenantId, discrepancyId: { in: [...ids] }, proposal: { status: "PENDING", caseId: { not: c.id } } },
    include: { proposal: { select: { caseId: true } } },
  });
  if (pending)
    return {
      ok: false,
      reason: "invalid_link",
      message: `Line ${pending.discrepancyId} is in case #${pending.proposal.caseId}'s link waiting for approval`,
    };
  const total = lines.reduce((sum, l) => sum + l.amount, 0n);
  if (total !== amount) {
    const gap = amount - total;
    return {
      ok: false,
      reason: "link_unbalanced",
      message: `The lines sum to ${money(total, currency)}; posting #${posting.id} is ${money(amount, currency)} (${money(gap < 0n ? -gap : gap, currency)} ${gap > 0n ? "short" : "over"}): a link must add up exactly`,
    };
  }
  return {
    ok: true,
    value: {
      postingId: posting.id,
      provider: posting.provider!,
      reference: posting.providerReference ?? own.reference,
      amount,
      currency,
      lines,
    },
  };
}

/** Stores the proposed link's rows, in the transaction that writes its proposal (the database refuses them later). */
export async function writeLinks(tx: Tx, tenantId: string, proposalId: bigint, plan: LinkPlan): Promise<void> {
  await tx.caseLink.createMany({
    data: plan.lines.map((l) => ({
      tenantId,
      proposalId,
      postingId: plan.postingId,
      discrepancyId: l.discrepancyId,
      amount: l.amount,
      currency: l.currency,
    })),
  });
}

/** The link of a proposal as stored, for approval and for the page. */
export async function storedLink(db: Tx, tenantId: string, proposalId: bigint) {
  return db.caseLink.findMany({
    where: { tenantId, proposalId },
    orderBy: { id: "asc" },
    include: { discrepancy: { select: { reference: true, state: true, day: true, bucket: true } } },
  });
}

/**
 * What approval carries out, after checking that nothing moved since the proposal:
 * each line still unresolved with the amount linked, and the posting's movement the same.
 */
export async function carryOutLink(
  tx: Tx,
  tenantId: string,
  c: LinkedCase,
  proposalId: bigint,
  now: Date,
): Promise<DomainResult<{ note: string; lines: number; postingId: bigint; amount: bigint; currency: string }>> {
  const rows = await storedLink(tx, tenantId, proposalId);
  const postingId = rows[0]!.postingId;
  const stale = (why: string): DomainResult<never> => ({
    ok: false,
    reason: "stale_proposal",
    message: `${why} since this link was proposed; reject it and propose again`,
  });
  const current = await tx.reconDiscrepancy.findMany({
    where: { tenantId, id: { in: rows.map((r) => r.discrepancyId) } },
  });
  for (const r of rows) {
    const d = current.find((x) => x.id === r.discrepancyId)!;
    if (d.state === "RESOLVED" || d.state === "FETCHED" || d.state === "IN_FLIGHT")
      return stale(`Line ${d.id} (${d.reference}) became ${d.state.toLowerCase().replace("_", " ")}`);
    if (d.theirAmount !== r.amount || d.theirCurrency?.trim() !== r.currency)
      return stale(`Line ${d.id} (${d.reference}) changed amount`);
  }
  const movement = await clearingMovement(tx, postingId);
  const currency = rows[0]!.currency;
  const total = rows.reduce((s, r) => s + r.amount, 0n);
  if (movement.length !== 1 || movement[0]!.currency !== currency || movement[0]!.amount !== total)
    return stale(`Posting #${postingId} changed`);

  const note = `linked by case #${c.id}: ${rows.map((r) => r.discrepancy.reference).join(" + ")} = posting #${postingId} (${money(total, currency)})`;
  const ids = [
    ...new Set([...rows.map((r) => r.discrepancyId), ...(c.discrepancy_id === null ? [] : [c.discrepancy_id])]),
  ];
  await tx.reconDiscrepancy.updateMany({
    where: { tenantId, id: { in: ids }, state: { not: "RESOLVED" } },
    data: { state: "RESOLVED", resolvedAt: now, note },
  });
  return { ok: true, value: { note, lines: rows.length, postingId, amount: total, currency } };
}

/**
 * Lines a link on this case could take, for the proposer to pick from: the
 * case's own line (a mismatch), then theirs-not-ours lines of the same provider
 * and currency, unresolved and not being posted, within two weeks of the case's day.
 */
export async function linkCandidates(db: Tx, tenantId: string, caseId: bigint) {
  const c = await db.case.findFirst({ where: { id: caseId, tenantId }, include: { discrepancy: true } });
  const own = c?.discrepancy;
  if (!c || !own?.postingId || !LINKABLE_KINDS.includes(c.kind)) return null;
  const movement = await clearingMovement(db, own.postingId);
  if (movement.length !== 1) return null;
  const { amount, currency } = movement[0]!;
  const twoWeeks = 14 * 86_400_000;
  const others = await db.reconDiscrepancy.findMany({
    where: {
      tenantId,
      provider: own.provider,
      bucket: "THEIRS_NOT_OURS",
      state: { in: ["OPEN", "FETCH_FAILED"] },
      theirCurrency: currency,
      day: { gte: new Date(own.day.getTime() - twoWeeks), lte: new Date(own.day.getTime() + twoWeeks) },
      caseLinks: { none: { proposal: { status: { in: ["PENDING", "APPROVED"] } } } },
    },
    orderBy: [{ day: "asc" }, { id: "asc" }],
    take: 100,
  });
  const line = (d: typeof own) => ({
    discrepancyId: d.id,
    reference: d.reference,
    bucket: d.bucket,
    state: d.state,
    day: d.day,
    amount: d.theirAmount!,
    currency,
    own: d.id === own.id,
  });
  return {
    postingId: own.postingId,
    amount,
    currency,
    lines: [
      ...(own.theirAmount !== null && own.theirCurrency?.trim() === currency ? [line(own)] : []),
      ...others.map(line),
    ],
  };
}
