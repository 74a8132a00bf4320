// Stripe's reporting categories (docs.stripe.com/reports/reporting-categories) as
// reconciliation reads them, the same for the balance transactions API and the
// itemized report file:
//   charge                    PAYMENT, keyed by the payment intent (else the charge)
//   partial_capture_reversal  PAYMENT, same key, negative: nets the charge down to what
//                             was captured, which is what payment_intent.succeeded posted
//   refund                    REFUND, keyed by the refund id (source_id)
//   refund_failure            REFUND, same key, positive: nets the refund to zero, so a
//                             refund the customer never received is a mismatch; and listed
//                             as not reconciled
//   payout, payout_reversal…  OTHER: money leaving for the bank, not a movement we post
//   anything else             OTHER, listed as not reconciled (fees, disputes, adjustments…)
import type { SettlementLine } from "@/lib/providers/types";

export type StripeCategory = {
  kind: SettlementLine["kind"];
  key: "payment" | "refund" | "source";
  notReconciled?: string;
};

const PAYOUTS = new Set([
  "payout",
  "payout_reversal",
  "payout_fee",
  "transfer",
  "transfer_reversal",
  "topup",
  "topup_reversal",
]);

export function stripeCategory(category: string): StripeCategory {
  switch (category) {
    case "charge":
    case "partial_capture_reversal":
      return { kind: "PAYMENT", key: "payment" };
    case "refund":
      return { kind: "REFUND", key: "refund" };
    case "refund_failure":
      return { kind: "REFUND", key: "refund", notReconciled: category };
    default:
      return PAYOUTS.has(category)
        ? { kind: "OTHER", key: "source" }
        : { kind: "OTHER", key: "source", notReconciled: category };
  }
}
