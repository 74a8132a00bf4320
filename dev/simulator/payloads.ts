// Provider payloads as the providers send them: one script per simulated provider
// (lib/providers/<name>/simulate.ts), each shaped exactly as Tally's parser for
// that provider reads it, with the ways that provider reformats a retry.
import { adyenScript } from "@/lib/providers/adyen/simulate";
import { flutterwaveScript } from "@/lib/providers/flutterwave/simulate";
import { paypalScript } from "@/lib/providers/paypal/simulate";
import { paystackScript } from "@/lib/providers/paystack/simulate";
import { standardScript } from "@/lib/providers/standard/simulate";
import { stripeScript } from "@/lib/providers/stripe/simulate";
import type { ProviderScript, SimProvider } from "@/dev/simulator/script";

export type { SimMovement, SimProvider } from "@/dev/simulator/script";
export { stripeCharge, stripePaymentIntent, stripeRefund } from "@/lib/providers/stripe/simulate";

const SCRIPTS: Record<SimProvider, ProviderScript> = {
  stripe: stripeScript,
  standard: standardScript,
  adyen: adyenScript,
  paystack: paystackScript,
  flutterwave: flutterwaveScript,
  paypal: paypalScript,
};

export function scriptFor(provider: SimProvider): ProviderScript {
  return SCRIPTS[provider];
}
