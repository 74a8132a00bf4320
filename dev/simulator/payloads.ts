// Provider payloads as the providers send them: each provider's script is its
// adapter's `simulate` (lib/providers/<name>/simulate.ts), shaped exactly as
// Tally's parser for that provider reads it, with the ways it reformats a retry.
import { adapterFor } from "@/lib/providers";
import type { ProviderScript, SimProvider } from "@/lib/providers/simulation/script";

export type { SimMovement, SimProvider } from "@/lib/providers/simulation/script";
export { stripeCharge, stripePaymentIntent, stripeRefund } from "@/lib/providers/stripe/simulate";

export function scriptFor(provider: SimProvider): ProviderScript {
  const adapter = adapterFor(provider);
  if (!adapter) throw new Error(`no adapter for simulated provider "${provider}"`);
  return adapter.simulate;
}
