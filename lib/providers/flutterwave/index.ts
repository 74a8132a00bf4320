import { confirmFlutterwave, FLUTTERWAVE_API_HOSTS } from "@/lib/providers/flutterwave/confirm";
import { parseFlutterwave } from "@/lib/providers/flutterwave/parse";
import { verifyFlutterwave } from "@/lib/providers/flutterwave/verify";
import { flutterwaveScript } from "@/lib/providers/flutterwave/simulate";
import type { ProviderAdapter } from "@/lib/providers/types";

export const flutterwave: ProviderAdapter = {
  provider: "flutterwave",
  // Not verif-hash: it is the endpoint's secret itself, and must not sit beside every event.
  headerNames: [],
  verify: verifyFlutterwave,
  parse: parseFlutterwave,
  confirm: confirmFlutterwave,
  api: FLUTTERWAVE_API_HOSTS,
  simulate: flutterwaveScript,
};
