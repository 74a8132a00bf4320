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
  // Adyen sends no webhook for its payout to the bank, nor for an invoice deduction, a
  // deposit correction or a balance transfer: the Settlement Details Report's
  // MerchantPayout and standalone records are the only word of them (./report.ts).
  settlementOnly: ["PAYOUT", "PAYOUT_FAILED", "ADJUSTMENT"],
  simulate: adyenScript,
};
