// Provider payloads as the providers send them: one script per simulated provider
// (lib/simulator/providers/<name>.ts), each shaped exactly as Tally's parser for
// that provider reads it, with the ways that provider reformats a retry.
import { adyenScript } from "@/lib/simulator/providers/adyen";
import { flutterwaveScript } from "@/lib/simulator/providers/flutterwave";
import { paypalScript } from "@/lib/simulator/providers/paypal";
import { paystackScript } from "@/lib/simulator/providers/paystack";
import { standardScript } from "@/lib/simulator/providers/standard";
import { stripeScript } from "@/lib/simulator/providers/stripe";
import type { Random } from "@/lib/simulator/random";
import type { ProviderScript, SimMovement, SimProvider } from "@/lib/simulator/script";

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

/** The event bodies announcing a movement: the second, when present, is the same money under another event type. */
export function eventsFor(m: SimMovement, r: Random, secondType: boolean): object[] {
  return SCRIPTS[m.provider].events(m, r, secondType);
}

/** A retry as the provider's serialiser might send it: same event, different bytes. */
export function reformat(provider: SimProvider, body: object, r: Random): object {
  return SCRIPTS[provider].reformat(body, r);
}

export function ignoredEvent(provider: SimProvider, r: Random, created: number): object {
  return SCRIPTS[provider].ignored(r, created);
}
