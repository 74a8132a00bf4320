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
  // Adyen sends no webhook for its payout to the bank: the MerchantPayout record of the
  // Settlement Details Report is the only word of it, posted from the report.
  payoutsFromSettlement: true,
  simulate: adyenScript,
};
