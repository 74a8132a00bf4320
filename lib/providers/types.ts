// The contract every payment provider implements: verify a delivery at the door,
// parse it in the worker, and optionally confirm it with the provider's API,
// read its settlement (API or report file) and simulate its traffic. Adding a
// provider is one folder behind these types and one line in lib/providers/index.ts.
import type { Provider } from "@/lib/generated/prisma/enums";
import type { ReportParser } from "@/lib/providers/report";
import type { ProviderScript } from "@/lib/providers/simulation/script";

export type { Provider };

/** Why a delivery was refused; also the `reason` label of the rejection metric. */
export type VerifyFailure =
  | "missing_header"
  | "malformed_header"
  | "timestamp_outside_tolerance"
  | "no_signature_matched"
  | "no_active_secret"
  /** Schemes that sign fields inside the body (Adyen) cannot verify a body they cannot read. */
  | "malformed_body"
  | "missing_signature"
  /** PayPal: the certificate URL is not PayPal's, or the certificate is not usable. */
  | "certificate_rejected"
  /** PayPal: the certificate could not be fetched. An outage, not the sender's fault: answered 503. */
  | "certificate_unavailable";

/**
 * The likely cause of a failed verification, worked out only after it failed
 * (lib/providers/explain.ts); also the `hint` label of the rejection metric.
 */
export type VerifyHint =
  /** The signature matches the body as it was before someone re-serialised or trimmed it. */
  | "body_reserialized"
  /** The signature matches the configured secret with its surrounding whitespace removed. */
  | "secret_whitespace"
  /** No secret we hold made this signature: another account, endpoint or mode, a key of the wrong kind, or a forged body. */
  | "wrong_secret"
  /** The secret is right (other signed parts of the delivery verify with it) but this part does not: altered or forged. */
  | "payload_altered"
  /** The signed timestamp is outside the tolerance. */
  | "clock_skew"
  /** The delivery carries another provider's signature headers: it was sent to the wrong Tally URL. */
  | "wrong_endpoint";

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
  | { ok: false; reason: VerifyFailure; message: string; hint?: VerifyHint };

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
  /**
   * The provider's id for looking this movement up in its API, when that is not
   * `reference` (Flutterwave: the numeric transaction id its verify endpoint takes).
   */
  lookupId?: string;
};

export type ParseResult =
  | { kind: "money"; eventType: string; movements: Movement[] }
  | { kind: "ignored"; eventType: string; reason: string }
  | { kind: "failed"; error: string };

/** The provider's own answer about a movement; see ProviderAdapter.confirm. */
export type ConfirmResult =
  /**
   * `movement`: the movement as the provider's API states it (amount, currency,
   * account), posted instead of the parsed one; the webhook's copy is only a claim.
   */
  { ok: true; movement?: Movement } | { ok: false; reason: ConfirmFailure; message: string };

export type ConfirmFailure =
  /** The endpoint's settings lack what the API call needs (an API key), or the provider refused them. */
  | "not_configured"
  /** The provider knows no such transaction. */
  | "not_found"
  /** The provider knows it, but not as a completed payment. */
  | "not_successful"
  /** The provider's record disagrees with the webhook on amount, currency, account or reference. */
  | "mismatch";

/** A provider's API: its name in messages, and the hosts its keys may be sent to. */
export type ProviderApi = { readonly provider: string; readonly hosts: readonly string[] };

export interface ProviderAdapter {
  readonly provider: Provider;
  /** Headers worth keeping beside the raw body (signatures, ids, timestamps), lower case. */
  readonly headerNames: readonly string[];
  verify(input: VerifyInput): VerifyResult | Promise<VerifyResult>;
  parse(rawBody: Buffer): ParseResult;
  /** What the provider expects back on success; most accept any 2xx. */
  readonly acknowledgement?: { body: string; contentType: string };
  /**
   * Asks the provider's API whether a parsed movement really happened, for
   * providers whose webhook authentication is too weak to credit on alone
   * (Flutterwave's verif-hash is a static shared secret, not a signature).
   * The worker calls it after claiming (so two deliveries never both ask) and
   * before the commit transaction; never at the door, because it is a network
   * call and the acknowledgement path makes none.
   *
   * `{ ok: false }` is a definite answer: the provider denies the movement, its
   * record disagrees, or the endpoint's settings cannot ask; nothing is posted,
   * the claim and event are FAILED with the message (reprocessable once fixed).
   * A thrown error is an outage (network, timeout, 429, 5xx): retry later.
   * Providers without the hook need no confirmation.
   */
  confirm?(movement: Movement, settings: Record<string, unknown>): Promise<ConfirmResult>;
  /** The provider's API hosts: in production its keys are sent to these only (lib/providers/api-base.ts). */
  readonly api?: ProviderApi;
  /** The provider's settlement API, when reconciliation can ask it (others reconcile from report files). */
  readonly settlement?: SettlementSource;
  /** The provider's own settlement report file format, when it has one Tally reads. */
  readonly report?: ReportParser;
  /** How the provider's traffic looks, for the simulator, the day generator and the replay (dev/). */
  readonly simulate: ProviderScript;
}

// What reconciliation compares: the provider's settlement lines, from its API
// or a report file, against our postings for the same window.

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
  /**
   * Money the comparison does not reconcile yet (fees, disputes, adjustments, refund
   * failures…): the provider's category, so the run counts and lists the line rather
   * than dropping it. Unset for payments, refunds and payouts.
   */
  notReconciled?: string;
};

export type FetchedEvent = {
  rawBody: Buffer<ArrayBuffer>;
  headers: Record<string, string>;
  fetchedFrom: string;
  /** The provider's id of the event, when it has one (shown, never used as identity). */
  deliveryId?: string;
};

export type EndpointContext = { tenantId: string; provider: Provider; settings: Record<string, unknown> };

/** A provider's settlement API. Missing events are fetched through it too. */
export interface SettlementSource {
  readonly description: string;
  lines(endpoint: EndpointContext, window: Window): AsyncIterable<SettlementLine>;
  /** The event for one reference, as a body our parser reads; null when the provider does not know it. */
  fetchEvent(endpoint: EndpointContext, reference: string): Promise<FetchedEvent | null>;
  /**
   * Events the provider created in the window but has not delivered (failed or still
   * pending), as bodies our parser reads: the hourly gap check stores them. Absent
   * when the provider has no such list.
   */
  undelivered?(endpoint: EndpointContext, window: Window): AsyncIterable<FetchedEvent>;
}
