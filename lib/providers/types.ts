// The contract every payment provider implements: verify a delivery at the door,
// parse it in the worker. Adding a provider is one folder behind these types.
import type { Provider } from "@/lib/generated/prisma/enums";

export type { Provider };

/** Why a delivery was refused; also the `reason` label of the rejection metric. */
export type VerifyFailure = "missing_header" | "malformed_header" | "timestamp_outside_tolerance" | "no_signature_matched" | "no_active_secret";

export type VerifyInput = {
  rawBody: Buffer;
  headers: Headers;
  /** Every secret currently valid for the endpoint (more than one during a rotation). */
  secrets: readonly string[];
  toleranceSeconds: number;
  /** Unix seconds; injected so tests can move the clock. */
  now: number;
  settings: Record<string, unknown>;
};

export type VerifyResult =
  | { ok: true; deliveryId: string | null }
  | { ok: false; reason: VerifyFailure; message: string };

/** One movement of money, as the provider reports it, in minor units. */
export type Movement = {
  kind: "PAYMENT" | "REFUND";
  /** The provider's own reference for this movement: stable across their retries. */
  reference: string;
  /** Our customer account, by the provider's identifier for it; null when the payload does not say. */
  account: string | null;
  /** For refunds whose payload names no account: the payment reference whose account to use. */
  paymentReference?: string;
  amount: bigint;
  /** ISO 4217, upper case. */
  currency: string;
  occurredAt: Date;
  description: string;
};

export type ParseResult =
  | { kind: "money"; eventType: string; movements: Movement[] }
  | { kind: "ignored"; eventType: string; reason: string }
  | { kind: "failed"; error: string };

export interface ProviderAdapter {
  readonly provider: Provider;
  /** Headers worth keeping beside the raw body (signatures, ids, timestamps), lower case. */
  readonly headerNames: readonly string[];
  verify(input: VerifyInput): VerifyResult | Promise<VerifyResult>;
  parse(rawBody: Buffer): ParseResult;
  /** What the provider expects back on success; most accept any 2xx. */
  readonly acknowledgement?: { body: string; contentType: string };
}
