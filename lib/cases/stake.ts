// What a case puts at stake, in minor units of one currency: the figure that
// decides whether a proposal needs one approver or two. One computation for the
// proposal (lib/cases/cases.ts), the case page and the decision form (a client
// component, so this module imports nothing from the server).

export type Stake = { amount: bigint; currency: string };

type Amounts = {
  ourAmount: bigint | null;
  ourCurrency: string | null;
  theirAmount: bigint | null;
  theirCurrency: string | null;
};

const abs = (a: bigint) => (a < 0n ? -a : a);

/** Timing or escalation: the amount of the discrepancy, ours when we have one. */
export function discrepancyStake(d: Amounts): Stake | null {
  const amount = d.ourAmount ?? d.theirAmount;
  if (amount === null) return null;
  return { amount: abs(amount), currency: (d.ourCurrency ?? d.theirCurrency ?? "XXX").trim() };
}

/** A correction: its largest movement on one leg. */
export function correctionStake(legs: readonly { amount: string | bigint; currency: string }[]): Stake {
  let best: Stake = { amount: 0n, currency: "XXX" };
  for (const leg of legs) {
    const a = abs(BigInt(leg.amount));
    if (a > best.amount) best = { amount: a, currency: leg.currency };
  }
  return best;
}

/** A conflict (a retry with other money, an over-refund): the larger of the two sides. */
export function conflictStake(sides: readonly { amount?: string; currency?: string }[]): Stake {
  let best: Stake = { amount: 0n, currency: "XXX" };
  for (const side of sides) {
    if (!side.amount || !side.currency) continue;
    const a = abs(BigInt(side.amount));
    if (a > best.amount) best = { amount: a, currency: side.currency };
  }
  return best;
}
