// Which providers Tally can reconcile through an API (others: report files).
import type { Provider } from "@/lib/generated/prisma/enums";
import { paystackSettlement } from "@/lib/providers/paystack/settlement";
import { stripeSettlement } from "@/lib/providers/stripe/settlement";
import type { SettlementSource } from "@/lib/recon/types";

const sources: Partial<Record<Provider, SettlementSource>> = { stripe: stripeSettlement, paystack: paystackSettlement };

export function settlementSourceFor(provider: Provider): SettlementSource | null {
  return sources[provider] ?? null;
}
