import { parseAdyen } from "@/lib/providers/adyen/parse";
import { verifyAdyen } from "@/lib/providers/adyen/verify";
import { adyenScript } from "@/lib/providers/adyen/simulate";
import { adyenReport } from "@/lib/providers/adyen/report";
import type { ProviderAdapter } from "@/lib/providers/types";

export const adyen: ProviderAdapter = {
  provider: "adyen",
  // The signatures are inside the body, which is stored whole.
  headerNames: [],
  verify: verifyAdyen,
  parse: parseAdyen,
  // Adyen counts a delivery as received only on this exact body.
  acknowledgement: { body: "[accepted]", contentType: "text/plain" },
  report: adyenReport,
  simulate: adyenScript,
};
