// Every code a case carries, in the words people read: the correction reason
// codes the proposer picks from, the resolutions, the case statuses and kinds.
// One module for the server (validation, pages) and the client (the decision
// form), with no database access, so the label a proposer picked is the label
// the checker, the history and the audit reader see.
export type CaseKindCode = "OURS_NOT_THEIRS" | "MISMATCH" | "CONFLICT" | "PAYOUT_RESIDUAL" | "BANK_UNMATCHED";
export type Resolution = "TIMING" | "ESCALATE" | "CORRECT" | "LINK";
export type CaseStatusCode = "OPEN" | "PROPOSED" | "WAITING" | "ESCALATED" | "RESOLVED";

/** Why a correction is right, as a code people can count. */
export const CORRECTION_REASONS: readonly { code: string; label: string; kinds: readonly CaseKindCode[] }[] = [
  {
    code: "not_settled",
    label: "The provider never settled it (failed or reversed at the provider)",
    kinds: ["OURS_NOT_THEIRS"],
  },
  { code: "posted_in_error", label: "Posted in error (a duplicate or a wrong reference)", kinds: ["OURS_NOT_THEIRS"] },
  { code: "test_payment", label: "A test payment that reached the live books", kinds: ["OURS_NOT_THEIRS"] },
  { code: "amount_differs", label: "Our amount is wrong: adjust to the provider's", kinds: ["MISMATCH"] },
  { code: "currency_differs", label: "Our currency is wrong: adjust to the provider's", kinds: ["MISMATCH"] },
  { code: "other", label: "Other (say why in the reason)", kinds: ["OURS_NOT_THEIRS", "MISMATCH"] },
];

/** The label the proposer picked; a code no longer offered still reads as itself rather than vanishing. */
export function reasonCodeLabel(code: string): string {
  return CORRECTION_REASONS.find((r) => r.code === code)?.label ?? code;
}

export function resolutionLabel(r: Resolution, kind: CaseKindCode): string {
  if (r === "LINK") return "Link — these settlement lines together are our posting (a split or re-referenced payment)";
  if (kind === "CONFLICT")
    return "Take it to the provider — nothing of it is posted until they say which delivery is right";
  if (kind === "PAYOUT_RESIDUAL")
    return r === "TIMING"
      ? "Timing — a line of this payout will be reported later: re-check on the next run"
      : "Take it to the provider — the payout is not what its lines add up to";
  if (kind === "BANK_UNMATCHED")
    return r === "TIMING"
      ? "Timing — the credit will show on a later statement: re-check on the next import"
      : "Take it to the provider and the bank — the money has not arrived";
  if (r === "TIMING") return "Timing — the provider will report it later: re-check on the next run";
  if (r === "ESCALATE")
    return kind === "OURS_NOT_THEIRS"
      ? "Confirmed valid — the provider's record is missing: escalate to them"
      : "Ours is right — the provider's record is wrong: escalate to them";
  return kind === "OURS_NOT_THEIRS"
    ? "Correct — reverse our posting"
    : "Correct — adjust our posting to the provider's amount";
}

export const CASE_STATUS_LABEL: Record<CaseStatusCode, string> = {
  OPEN: "to decide",
  PROPOSED: "awaiting approval",
  WAITING: "waiting for the next run",
  ESCALATED: "escalated to the provider",
  RESOLVED: "resolved",
};

export const CASE_KIND_LABEL: Record<CaseKindCode, string> = {
  OURS_NOT_THEIRS: "ours, not theirs",
  MISMATCH: "mismatch",
  CONFLICT: "conflict (not posted)",
  PAYOUT_RESIDUAL: "payout does not balance",
  BANK_UNMATCHED: "payout not at the bank",
};

export type ConflictKindCode = "DIFFERENT_RETRY" | "OVER_REFUND" | "OVER_WITHDRAWAL";

/** A conflict case in words: the case list's cell, the case page's kind, and its evidence's explanation and headings. */
export const CONFLICT_KIND_LABEL: Record<
  ConflictKindCode,
  { short: string; title: string; explained: string; claimed: string; delivered: string }
> = {
  DIFFERENT_RETRY: {
    short: "deliveries disagree",
    title: "Conflict: a delivery disagrees with the claimed movement",
    explained:
      "A delivery of an already-claimed reference says different money: it is not posted, and neither is anything changed.",
    claimed: "What the claim holds",
    delivered: "What this delivery says",
  },
  OVER_REFUND: {
    short: "refunds exceed the payment",
    title: "Conflict: refunds would exceed their payment",
    explained: "This refund would take the payment's refunded total past its amount: it is held, not posted.",
    claimed: "The payment and its refunds",
    delivered: "The refund held",
  },
  OVER_WITHDRAWAL: {
    short: "a dispute exceeds the payment",
    title: "Conflict: a dispute that would take back more than the payment",
    explained:
      "This dispute would take the payment's refunds and disputes (less what disputes gave back) past its amount: it is held, not posted.",
    claimed: "The payment and what was taken back from it",
    delivered: "The dispute held",
  },
};
