import { parseStripe } from "@/lib/providers/stripe/parse";
import { STRIPE_SIGNATURE_HEADER, verifyStripe } from "@/lib/providers/stripe/verify";
import type { ProviderAdapter } from "@/lib/providers/types";

export const stripe: ProviderAdapter = {
  provider: "stripe",
  headerNames: [STRIPE_SIGNATURE_HEADER],
  verify: verifyStripe,
  parse: parseStripe,
};
