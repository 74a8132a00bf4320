import { parsePaystack } from "@/lib/providers/paystack/parse";
import { PAYSTACK_SIGNATURE_HEADER, verifyPaystack } from "@/lib/providers/paystack/verify";
import { paystackScript } from "@/lib/providers/paystack/simulate";
import { PAYSTACK_API, paystackSettlement } from "@/lib/providers/paystack/settlement";
import type { ProviderAdapter } from "@/lib/providers/types";

export const paystack: ProviderAdapter = {
  provider: "paystack",
  headerNames: [PAYSTACK_SIGNATURE_HEADER],
  verify: verifyPaystack,
  parse: parsePaystack,
  // charge.success may carry "fees": null (Paystack's own published sample does): the
  // webhooks do not carry every fee, so one only the settlement has is posted from it
  // as a matter of course rather than made a discrepancy (./parse.ts).
  feesInWebhooks: false,
  // No payout webhook: a settlement is known only from GET /settlement (./settlement.ts).
  settlementOnly: ["PAYOUT", "PAYOUT_FAILED"],
  api: PAYSTACK_API,
  settlement: paystackSettlement,
  simulate: paystackScript,
};
