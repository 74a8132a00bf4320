// The bank matcher's outcomes in the words people read (lib/bank/match.ts).
export const MATCH_RULE_LABEL: Record<string, string> = {
  reference: "reference in the remittance",
  reference_sum: "names several payouts (their sum)",
  amount_date: "amount and date",
  amount_date_sum: "sum of a day's payouts",
  within_tolerance: "within tolerance",
};

export const matchRuleLabel = (rule: string) => MATCH_RULE_LABEL[rule] ?? rule;
