// Provider payloads as the providers send them: one script per simulated provider
// (lib/simulator/providers/<name>.ts), each shaped exactly as Tally's parser for
// that provider reads it, with the ways that provider reformats a retry.
import { adyenScript } from "@/lib/simulator/providers/adyen";
import { flutterwaveScript } from "@/lib/simulator/providers/flutterwave";
import { paypalScript } from "@/lib/simulator/providers/paypal";
import { paystackScript } from "@/lib/simulator/providers/paystack";
import { standardScript } from "@/lib/simulator/providers/standard";
import { stripeScript } from "@/lib/simulator/providers/stripe";
import type { ProviderScript, SimProvider } from "@/lib/simulator/script";

export type { SimMovement, SimProvider } from "@/lib/simulator/script";
export { stripeCharge, stripePaymentIntent, stripeRefund } from "@/lib/simulator/providers/stripe";

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
