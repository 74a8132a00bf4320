// A movement only the provider's settlement reports: a fee Stripe's webhooks never
// carry, a dispute whose webhook never came. Reconciliation stores it as a raw event
// (source SETTLEMENT) in Tally's own body, below, and the worker claims and posts it
// like any delivery, so a webhook for it arriving later is a duplicate, not a second
// posting. The body is read only for raw events Tally stored with that source (the
// source is ours, never the sender's): a webhook shaped like it is just an
// unparseable webhook of its provider.
import { z } from "zod";
import { describeZodError, parseJson } from "@/lib/providers/fields";
import { BANK_REFERENCE_MAX_CHARS, type Movement, type ParseResult } from "@/lib/providers/types";
import { SIGNED_KINDS } from "@/lib/ledger/movements";

export const SETTLEMENT_MOVEMENT_TYPE = "tally.settlement_movement";

/** What reconciliation posts from a settlement line; payments and refunds are fetched as events instead. */
export const SETTLEMENT_KINDS = ["FEE", "DISPUTE", "DISPUTE_REVERSAL", "ADJUSTMENT"] as const;
/**
 * Posted from the settlement too for a provider whose payouts only its settlement
 * reports (ProviderAdapter.settlementOnly); Stripe's are fetched as events.
 */
export const PAYOUT_SETTLEMENT_KINDS = ["PAYOUT", "PAYOUT_FAILED"] as const;
const KINDS = [...SETTLEMENT_KINDS, ...PAYOUT_SETTLEMENT_KINDS] as const;
type SettlementKind = (typeof KINDS)[number];

const body = z.object({
  type: z.literal(SETTLEMENT_MOVEMENT_TYPE),
  movement: z.object({
    kind: z.enum(KINDS),
    reference: z.string().min(1).max(255),
    paymentReference: z.string().min(1).max(255).optional(),
    /** A payout's bank account, by the provider's id of it. */
    account: z.string().min(1).max(200).optional(),
    arrivalDate: z.iso.date().optional(),
    /** A payout's text at the bank (SettlementLine.bankReference). */
    bankReference: z.string().trim().min(1).max(BANK_REFERENCE_MAX_CHARS).optional(),
    amount: z.string().regex(/^-?[0-9]{1,18}$/, "an integer of minor units"),
    currency: z.string().regex(/^[A-Z]{3}$/, "an ISO 4217 code"),
    occurredAt: z.iso.datetime(),
    description: z.string().max(500),
  }),
  /** Where it came from: the run, the report's row and its text (evidence, not read). */
  source: z.object({ runId: z.string(), row: z.number().int(), line: z.string() }),
});

export type SettlementMovement = Omit<Movement, "kind" | "account" | "arrivalDate"> & {
  kind: SettlementKind;
  account?: string;
  arrivalDate?: string;
};

export function settlementMovementBody(m: SettlementMovement, source: { runId: bigint; row: number; line: string }) {
  return Buffer.from(
    JSON.stringify({
      type: SETTLEMENT_MOVEMENT_TYPE,
      movement: {
        kind: m.kind,
        reference: m.reference,
        ...(m.paymentReference && { paymentReference: m.paymentReference }),
        ...(m.account && { account: m.account }),
        ...(m.arrivalDate && { arrivalDate: m.arrivalDate }),
        ...(m.bankReference && { bankReference: m.bankReference }),
        amount: m.amount.toString(),
        currency: m.currency,
        occurredAt: m.occurredAt.toISOString(),
        description: m.description,
      },
      source: { runId: source.runId.toString(), row: source.row, line: source.line },
    }),
  );
}

export function parseSettlementMovement(rawBody: Buffer): ParseResult {
  const json = parseJson(rawBody);
  if (!json.ok) return { kind: "failed", error: json.error };
  const r = body.safeParse(json.value);
  if (!r.success) return { kind: "failed", error: `not a settlement movement: ${describeZodError(r.error)}` };
  const m = r.data.movement;
  const amount = BigInt(m.amount);
  if (amount === 0n) return { kind: "ignored", eventType: SETTLEMENT_MOVEMENT_TYPE, reason: "zero amount" };
  if (amount < 0n && !SIGNED_KINDS.has(m.kind))
    return { kind: "failed", error: `a ${m.kind.toLowerCase()} cannot be negative (${m.amount})` };
  return {
    kind: "money",
    eventType: SETTLEMENT_MOVEMENT_TYPE,
    movements: [
      {
        kind: m.kind,
        reference: m.reference,
        // Only a payout's account is read from the body: every other kind's counter account is the provider's own.
        account: m.kind === "PAYOUT" || m.kind === "PAYOUT_FAILED" ? (m.account ?? null) : null,
        ...(m.paymentReference && { paymentReference: m.paymentReference }),
        ...(m.arrivalDate && { arrivalDate: new Date(`${m.arrivalDate}T00:00:00Z`) }),
        // Only a payout reaches the bank: another kind's text would be searched in its credits for nothing.
        ...(m.kind === "PAYOUT" && m.bankReference && { bankReference: m.bankReference }),
        amount,
        currency: m.currency,
        occurredAt: new Date(m.occurredAt),
        description: m.description,
      },
    ],
  };
}
