// The providers Tally speaks. A provider missing here answers 404 at the door.
import { adyen } from "@/lib/providers/adyen";
import { flutterwave } from "@/lib/providers/flutterwave";
import { paypal } from "@/lib/providers/paypal";
import { paystack } from "@/lib/providers/paystack";
import { standard } from "@/lib/providers/standard";
import { stripe } from "@/lib/providers/stripe";
import type { Provider, ProviderAdapter } from "@/lib/providers/types";

const adapters: Partial<Record<Provider, ProviderAdapter>> = { stripe, standard, adyen, paystack, flutterwave, paypal };

export function adapterFor(provider: string): ProviderAdapter | null {
  return Object.hasOwn(adapters, provider) ? adapters[provider as Provider]! : null;
}

export function supportedProviders(): Provider[] {
  return Object.keys(adapters) as Provider[];
}
