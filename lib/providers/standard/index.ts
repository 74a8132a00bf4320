import { parseStandard } from "@/lib/providers/standard/parse";
import { STANDARD_HEADERS, verifyStandard } from "@/lib/providers/standard/verify";
import { standardScript } from "@/lib/providers/standard/simulate";
import type { ProviderAdapter } from "@/lib/providers/types";

export const standard: ProviderAdapter = {
  provider: "standard",
  headerNames: STANDARD_HEADERS,
  verify: verifyStandard,
  parse: parseStandard,
  simulate: standardScript,
};
