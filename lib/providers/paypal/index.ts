import { confirmPaypal, PAYPAL_API_HOSTS } from "@/lib/providers/paypal/confirm";
import { parsePaypal } from "@/lib/providers/paypal/parse";
import { PAYPAL_HEADERS, verifyPaypal } from "@/lib/providers/paypal/verify";
import { paypalScript } from "@/lib/providers/paypal/simulate";
import type { ProviderAdapter } from "@/lib/providers/types";

export const paypal: ProviderAdapter = {
  provider: "paypal",
  headerNames: PAYPAL_HEADERS,
  verify: verifyPaypal,
  parse: parsePaypal,
  simulate: paypalScript,
  // The signature covers a CRC-32 of the body, which anyone can match: PayPal's API is asked before posting.
  confirm: confirmPaypal,
  api: PAYPAL_API_HOSTS,
};
