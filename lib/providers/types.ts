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

/**
 * PAYMENT and REFUND move a customer's money; FEE, DISPUTE, DISPUTE_REVERSAL and
 * ADJUSTMENT the provider's charges and withdrawals; PAYOUT and PAYOUT_FAILED the
 * balance to and back from the bank. The accounts each moves: lib/ledger/movements.ts.
 */
export type MovementKind =
  | "PAYMENT"
  | "REFUND"
  | "FEE"
  | "DISPUTE"
  | "DISPUTE_REVERSAL"
  | "ADJUSTMENT"
  | "PAYOUT"
  | "PAYOUT_FAILED";

/** One movement of money, as the provider reports it, in minor units. */
export type Movement = {
  kind: MovementKind;
  /** The provider's own reference for this movement: stable across their retries. */
  reference: string;
  /**
   * Our customer account, by the provider's identifier for it (a payout's: the bank
   * account it went to); null when the payload does not say.
   */
  account: string | null;
  /**
   * For refunds whose payload names no account: the payment reference whose account to
   * use. A failed payout: its payout. A dispute: the payment disputed (shown, not used).
   */
  paymentReference?: string;
  /** Positive; only an ADJUSTMENT may be negative, with the provider's sign. Never zero. */
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
  /** A payout: the day the provider expects it at the bank. */
  arrivalDate?: Date;
  /** A payout: the text the provider says its bank transfer carries (SettlementLine.bankReference). */
  bankReference?: string;
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
  /**
   * Whether its webhooks carry the fee of a movement. When they do not (Stripe's name a
   * balance transaction by id only), fees come from the settlement as a matter of course:
   * posted from it and counted on the run, not discrepancies. When they do, a fee the
   * settlement has and we lack is a theirs-not-ours (cause FEE).
   */
  readonly feesInWebhooks?: boolean;
  /**
   * Movement kinds that only its settlement ever reports: no webhook carries them and
   * there is no event to fetch (Adyen's MerchantPayout and InvoiceDeduction records,
   * Paystack's settlements). A line of such a kind that we lack is posted from the
   * settlement, like a fee, and is expected: counted on the run (postedFromSettlement),
   * never a discrepancy, since nothing failed to arrive. Payout kinds listed here are
   * posted rather than fetched; Stripe's payouts come by webhook and are fetched.
   */
  readonly settlementOnly?: readonly MovementKind[];
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

/** The longest bank reference kept: a reference's bound (a camt.053 remittance line holds 140). */
export const BANK_REFERENCE_MAX_CHARS = 255;

export type SettlementLine = {
  /** Row in the file (1 = header), or position in the API listing. */
  row: number;
  /** The provider's reference of the movement, as our parsers key it. */
  reference: string;
  /** A movement kind (lib/ledger/movements.ts); OTHER: settled, but nothing Tally posts (a transfer, a top-up). */
  kind: MovementKind | "OTHER";
  /**
   * Signed minor units on the provider's balance (gross), as the movement's clearing leg
   * is signed: payments and reinstatements positive; refunds, fees, disputes, payouts negative.
   */
  amount: bigint;
  /**
   * The line on the provider's balance, when that is in another currency than
   * `amount` (a charge settled in another currency): the payout's side of it.
   */
  settledGross?: bigint;
  settledCurrency?: string;
  /** What the provider kept for this line, in the settled currency (minor units, positive when it charged, negative when it gave back). */
  fee?: bigint;
  /** The payout that paid this line out (for a payout line, itself); unset when the source does not say. */
  payout?: string;
  /** The provider's own id of the line (Stripe: the balance transaction), kept per payout. */
  lineId?: string;
  /** A payout line: the provider's id of the bank account it went to (posted to `bank:<account>`). */
  account?: string;
  /** A payout line: the day the provider expects it at the bank. */
  arrivalDate?: Date;
  /**
   * A payout line: the text the provider says its transfer carries to the bank (Adyen: the
   * MerchantPayout's Modification Reference, "TX… batch 7, <merchant account>"), when that is
   * not `reference`. The bank step looks for it in a credit's remittance beside `reference`,
   * which for such providers is our key and never reaches the bank. Trimmed, at most
   * BANK_REFERENCE_MAX_CHARS; unset when the provider gives none.
   */
  bankReference?: string;
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
