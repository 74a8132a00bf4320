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
  api: PAYSTACK_API,
  settlement: paystackSettlement,
  simulate: paystackScript,
};
