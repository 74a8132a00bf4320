import { parsePaystack } from "@/lib/providers/paystack/parse";
import { PAYSTACK_SIGNATURE_HEADER, verifyPaystack } from "@/lib/providers/paystack/verify";
import type { ProviderAdapter } from "@/lib/providers/types";

export const paystack: ProviderAdapter = {
  provider: "paystack",
  headerNames: [PAYSTACK_SIGNATURE_HEADER],
  verify: verifyPaystack,
  parse: parsePaystack,
};
