// Stripe's reporting categories (docs.stripe.com/reports/reporting-categories) as
// reconciliation reads them, the same for the balance transactions API and the
// itemized report file. The reference is what the webhook's movement is keyed by
// (./parse.ts), so a line and its posting meet:
//   charge                    PAYMENT, keyed by the payment intent (else the charge)
//   partial_capture_reversal  PAYMENT, same key, negative: nets the charge down to what
//                             was captured, which is what payment_intent.succeeded posted
//   refund                    REFUND, keyed by the refund id (source_id)
//   refund_failure            REFUND, same key, positive: nets the refund to zero, so a
//                             refund the customer never received is a mismatch; and listed
//                             as not reconciled
//   dispute                   DISPUTE, keyed by the dispute id (source_id)
//   dispute_reversal          DISPUTE_REVERSAL, keyed dispute id + ":reinstated"
//   payout                    PAYOUT, keyed by the payout id (source_id)
//   payout_reversal, payout_failure  PAYOUT_FAILED, keyed payout id + ":failed"
//   fee, payout_fee, stripe_fee, tax   FEE: Stripe's charges not tied to one transaction
//   other_adjustment, …       ADJUSTMENT, signed as Stripe reports it
//   transfer, topup…          OTHER: money moved by the account itself, not posted
//   anything else             OTHER, listed as not reconciled
// Every line's own `fee` (a charge's processing fee, a dispute's fee) is posted as a
// FEE keyed line reference + ":fee" (lib/recon/run.ts).
import type { SettlementLine } from "@/lib/providers/types";

export type StripeCategory = {
  kind: SettlementLine["kind"];
  key: "payment" | "refund" | "source";
  /** Appended to the reference, as ./parse.ts keys the second movement of one object. */
  suffix?: string;
  notReconciled?: string;
};

const UNPOSTED = new Set(["transfer", "transfer_reversal", "topup", "topup_reversal"]);
const FEES = new Set(["fee", "payout_fee", "stripe_fee", "tax", "network_cost"]);
const ADJUSTMENTS = new Set(["other_adjustment", "risk_reserved_funds", "risk_released_funds", "contribution"]);

export function stripeCategory(category: string): StripeCategory {
  switch (category) {
    case "charge":
    case "partial_capture_reversal":
      return { kind: "PAYMENT", key: "payment" };
    case "refund":
      return { kind: "REFUND", key: "refund" };
    case "refund_failure":
      return { kind: "REFUND", key: "refund", notReconciled: category };
    case "dispute":
      return { kind: "DISPUTE", key: "source" };
    case "dispute_reversal":
      return { kind: "DISPUTE_REVERSAL", key: "source", suffix: ":reinstated" };
    case "payout":
      return { kind: "PAYOUT", key: "source" };
    case "payout_reversal":
    case "payout_failure":
      return { kind: "PAYOUT_FAILED", key: "source", suffix: ":failed" };
    default:
      if (FEES.has(category)) return { kind: "FEE", key: "source" };
      if (ADJUSTMENTS.has(category)) return { kind: "ADJUSTMENT", key: "source" };
      return UNPOSTED.has(category)
        ? { kind: "OTHER", key: "source" }
        : { kind: "OTHER", key: "source", notReconciled: category };
  }
}
