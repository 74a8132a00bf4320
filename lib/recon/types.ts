// What reconciliation compares: the provider's settlement lines, from its API
// or a report file, against our postings for the same window.
import type { Provider } from "@/lib/generated/prisma/enums";

export type Window = { from: Date; to: Date };

export type SettlementLine = {
  /** Row in the file (1 = header), or position in the API listing. */
  row: number;
  /** The provider's reference of the movement, as our parsers key it. */
  reference: string;
  /** OTHER: fees, payouts, chargebacks, adjustments: settled, but not something a webhook posts. */
  kind: "PAYMENT" | "REFUND" | "OTHER";
  /** Signed minor units: payments positive, refunds negative. */
  amount: bigint;
  currency: string;
  occurredAt: Date;
  /** The line as the provider gave it (CSV text or JSON), kept as evidence. */
  raw: string;
};

export type FetchedEvent = { rawBody: Buffer<ArrayBuffer>; headers: Record<string, string>; fetchedFrom: string };

export type EndpointContext = { tenantId: string; provider: Provider; settings: Record<string, unknown> };

/** A provider's settlement API. Missing events are fetched through it too. */
export interface SettlementSource {
  readonly description: string;
  lines(endpoint: EndpointContext, window: Window): AsyncIterable<SettlementLine>;
  /** The event for one reference, as a body our parser reads; null when the provider does not know it. */
  fetchEvent(endpoint: EndpointContext, reference: string): Promise<FetchedEvent | null>;
}
