import { parseStripe } from "@/lib/providers/stripe/parse";
import { STRIPE_SIGNATURE_HEADER, verifyStripe } from "@/lib/providers/stripe/verify";
import { stripeScript } from "@/lib/providers/stripe/simulate";
import { STRIPE_API, stripeSettlement } from "@/lib/providers/stripe/settlement";
import { stripeReport } from "@/lib/providers/stripe/report";
import type { ProviderAdapter } from "@/lib/providers/types";

export const stripe: ProviderAdapter = {
  provider: "stripe",
  headerNames: [STRIPE_SIGNATURE_HEADER],
  verify: verifyStripe,
  parse: parseStripe,
  api: STRIPE_API,
  settlement: stripeSettlement,
  report: stripeReport,
  simulate: stripeScript,
};
