// Which accounts a money movement moves, by kind: one rule for the worker's commit,
// reconciliation's signs and the generated month's truth. Debits positive. The
// provider's clearing account is what the provider holds for us; every movement
// has it on one side, so its leg is the movement as the provider's balance sees it
// (a charge adds, a refund, fee, dispute or payout takes away), which is the sign
// of the provider's settlement lines (Stripe's `gross`).
import type { AccountKind, Provider } from "@/lib/generated/prisma/enums";
import type { Movement, MovementKind } from "@/lib/providers/types";
import { clearingAccountCode, customerAccountCode, UNALLOCATED_ACCOUNT } from "@/lib/ledger/postings";

/** The sign of a movement on the provider's clearing account, for its (positive) amount. ADJUSTMENT carries its own sign. */
export const CLEARING_SIGN: Record<MovementKind, 1n | -1n> = {
  PAYMENT: 1n,
  REFUND: -1n,
  FEE: -1n,
  DISPUTE: -1n,
  DISPUTE_REVERSAL: 1n,
  ADJUSTMENT: 1n,
  PAYOUT: -1n,
  PAYOUT_FAILED: 1n,
};

/**
 * Kinds whose amount may be negative: the provider's sign is the meaning (an
 * adjustment in our favour or not; a fee the provider gave back).
 */
export const SIGNED_KINDS: ReadonlySet<MovementKind> = new Set(["ADJUSTMENT", "FEE"]);

/** Kinds other claims wait for (a refund for its payment, a failed payout for its payout). */
export const AWAITED_KINDS: ReadonlySet<MovementKind> = new Set(["PAYMENT", "PAYOUT"]);

/** For kinds that wait: the kind they wait for. */
export const AWAITS: Partial<Record<MovementKind, MovementKind>> = { REFUND: "PAYMENT", PAYOUT_FAILED: "PAYOUT" };

export const feesAccountCode = (provider: Provider) => `fees:${provider}`;
export const disputesAccountCode = (provider: Provider) => `disputes:${provider}`;
export const adjustmentsAccountCode = (provider: Provider) => `adjustments:${provider}`;
/** The bank account a payout went to, by the provider's id of it (Stripe's ba_…). */
export const bankAccountCode = (destination: string) => `bank:${destination}`;
export const UNKNOWN_BANK_ACCOUNT = "bank:(unknown)";

export type CounterAccount = { code: string; kind: AccountKind };

/**
 * The account on the other side of the clearing leg. Null for a refund (and a failed
 * payout) whose payload names no account: it takes its payment's (payout's), which the
 * commit looks up.
 */
export function counterAccount(provider: Provider, m: Movement): CounterAccount | null {
  switch (m.kind) {
    case "PAYMENT":
      return { code: m.account ? customerAccountCode(m.account) : UNALLOCATED_ACCOUNT, kind: "CUSTOMER" };
    case "REFUND":
      return m.account ? { code: customerAccountCode(m.account), kind: "CUSTOMER" } : null;
    case "FEE":
      return { code: feesAccountCode(provider), kind: "FEES" };
    case "DISPUTE":
    case "DISPUTE_REVERSAL":
      return { code: disputesAccountCode(provider), kind: "DISPUTES" };
    case "ADJUSTMENT":
      return { code: adjustmentsAccountCode(provider), kind: "ADJUSTMENTS" };
    case "PAYOUT":
      return { code: m.account ? bankAccountCode(m.account) : UNKNOWN_BANK_ACCOUNT, kind: "BANK" };
    case "PAYOUT_FAILED":
      return m.account ? { code: bankAccountCode(m.account), kind: "BANK" } : null;
  }
}

/** The movement's two legs: the clearing account's, signed as the provider's balance moved, and the counter account's. */
export function movementLegs(
  m: Pick<Movement, "kind" | "amount" | "currency">,
  clearingId: bigint,
  counterId: bigint,
): { accountId: bigint; amount: bigint; currency: string }[] {
  const onClearing = CLEARING_SIGN[m.kind] * m.amount;
  return [
    { accountId: clearingId, amount: onClearing, currency: m.currency },
    { accountId: counterId, amount: -onClearing, currency: m.currency },
  ];
}

export { clearingAccountCode };
