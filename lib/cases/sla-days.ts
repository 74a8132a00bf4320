// The SLA of each case kind, in days, as TALLY_CASE_SLA_DAYS writes it:
// "MISMATCH=5,OURS_NOT_THEIRS=5,CONFLICT=2,PAYOUT_RESIDUAL=3,BANK_UNMATCHED=3".
// Pure, so lib/platform/config.ts can validate with it without importing the database.
import type { CaseKindCode } from "@/lib/cases/labels";

export const CASE_KINDS: readonly CaseKindCode[] = [
  "OURS_NOT_THEIRS",
  "MISMATCH",
  "CONFLICT",
  "PAYOUT_RESIDUAL",
  "BANK_UNMATCHED",
];

export type CaseSlaDays = Record<CaseKindCode, number>;

/** A conflict is money in dispute before anything is posted: the shortest. Payout and bank gaps block a close. */
export const DEFAULT_CASE_SLA_DAYS: CaseSlaDays = {
  OURS_NOT_THEIRS: 5,
  MISMATCH: 5,
  CONFLICT: 2,
  PAYOUT_RESIDUAL: 3,
  BANK_UNMATCHED: 3,
};

/** The case_sla table's CHECK: at least a day, at most a year. */
export const MAX_SLA_DAYS = 365;

/** Kinds not named keep their default; a kind named twice, an unknown kind or a bad number is refused. */
export function parseCaseSlaDays(text: string): CaseSlaDays | string {
  const out: CaseSlaDays = { ...DEFAULT_CASE_SLA_DAYS };
  const seen = new Set<string>();
  for (const item of text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Z_]+)\s*=\s*(\d{1,3})$/.exec(item);
    if (!m) return `"${item}" is not KIND=DAYS (e.g. MISMATCH=5)`;
    const kind = m[1] as CaseKindCode;
    if (!CASE_KINDS.includes(kind)) return `"${m[1]}" is not a case kind (${CASE_KINDS.join(", ")})`;
    if (seen.has(kind)) return `${kind} is given twice`;
    seen.add(kind);
    const days = Number(m[2]);
    if (days < 1 || days > MAX_SLA_DAYS) return `${kind}=${days}: days must be from 1 to ${MAX_SLA_DAYS}`;
    out[kind] = days;
  }
  return out;
}
