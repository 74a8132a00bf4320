// The providers Tally speaks. A provider missing here answers 404 at the door.
import { standard } from "@/lib/providers/standard";
import { stripe } from "@/lib/providers/stripe";
import type { Provider, ProviderAdapter } from "@/lib/providers/types";

const adapters: Partial<Record<Provider, ProviderAdapter>> = { stripe, standard };

export function adapterFor(provider: string): ProviderAdapter | null {
  return Object.hasOwn(adapters, provider) ? adapters[provider as Provider]! : null;
}

export function supportedProviders(): Provider[] {
  return Object.keys(adapters) as Provider[];
}
