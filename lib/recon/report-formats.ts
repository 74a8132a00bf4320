// The report file formats reconciliation reads: each provider's own (its
// adapter's `report`) and Tally's minimal format for any provider.
import { adapterFor, supportedProviders } from "@/lib/providers";
import type { ReportParser } from "@/lib/providers/report";
import type { Provider } from "@/lib/providers/types";
import { tallyReport } from "@/lib/recon/tally-report";

export function reportParsers(): ReportParser[] {
  const own = supportedProviders().flatMap((p) => adapterFor(p)?.report ?? []);
  return [...own, tallyReport];
}

export function reportFormats(): string[] {
  return reportParsers().map((p) => p.format);
}

export function reportParserFor(format: string): ReportParser | null {
  return reportParsers().find((p) => p.format === format) ?? null;
}

/** The format whose header this is, or null. */
export function detectReport(header: string[]): ReportParser | null {
  const names = new Set(header.map((h) => h.trim()));
  return reportParsers().find((p) => p.detect(names)) ?? null;
}

/** "Stripe's itemized balance report, Adyen's Settlement Details Report, or Tally's …": for refusals. */
export function describeFormats(): string {
  const d = reportParsers().map((p) => p.description);
  return d.length > 1 ? `${d.slice(0, -1).join(", ")}, or ${d.at(-1)}` : (d[0] ?? "");
}

export function settlementSourceFor(provider: Provider) {
  return adapterFor(provider)?.settlement ?? null;
}
