// Flutterwave (v3) as the day generator plays it: charge.completed with status
// successful, keyed by flw_ref, carrying the numeric transaction id the worker
// confirms through the verify API (dev/simulator/flutterwave-api.ts answers it from
// the same movements). No refunds: Tally's parser posts Flutterwave payments only.
// Amounts are major-unit JSON numbers made from exact minor units by lib/money's
// toDecimalText, so the truth's minor units are what the parser reads back. Retries
// may reorder keys, send null as "", numbers as strings, or meta as meta_data.
import { toDecimalText } from "@/lib/ledger/money";
import {
  chars,
  drawMoney,
  isoMillis,
  reshape,
  type CurrencyMix,
  type ProviderScript,
  type SimMovement,
} from "@/lib/providers/simulation/script";

const MIX: CurrencyMix = [
  ["NGN", 55, 10_000, 50_000_000],
  ["GHS", 10, 100, 500_000],
  ["KES", 10, 1_000, 2_000_000],
  ["USD", 15, 100, 100_000],
  ["UGX", 10, 1_000, 2_000_000],
];

/** The amount as Flutterwave writes it: a JSON number of major units. */
export const flutterwaveAmount = (m: Pick<SimMovement, "amount" | "currency">) =>
  Number(toDecimalText(BigInt(m.amount), m.currency));
export const flutterwaveTxRef = (m: Pick<SimMovement, "lookupId">) => `tally-sim-${m.lookupId}`;

/** The transaction as Flutterwave describes it: the webhook's data, and what its verify API answers. */
export function flutterwaveTransaction(m: SimMovement) {
  const amount = flutterwaveAmount(m);
  return {
    id: Number(m.lookupId),
    tx_ref: flutterwaveTxRef(m),
    flw_ref: m.reference,
    device_fingerprint: "a42937f4a73ce8bb8b8df14e63a2df31",
    amount,
    currency: m.currency,
    charged_amount: amount,
    app_fee: Number(toDecimalText(BigInt(Math.ceil(m.amount * 0.014)), m.currency)),
    merchant_fee: 0,
    processor_response: "Approved by Financial Institution",
    auth_model: "PIN",
    ip: "197.210.64.96",
    narration: "CARD Transaction ",
    status: "successful",
    payment_type: "card",
    created_at: isoMillis(m.created),
    account_id: 17_321,
    meta: { account: m.account },
    customer: {
      id: 215_000_000 + (Number(m.lookupId) % 100_000),
      name: "Sim Customer",
      phone_number: null,
      email: `${m.account}@example.com`,
      created_at: isoMillis(m.created - 30),
    },
    card: {
      first_6digits: "553188",
      last_4digits: "2950",
      issuer: "MASTERCARD  CREDIT",
      country: "NG",
      type: "MASTERCARD",
      expiry: "09/32",
    },
  };
}

function chargeCompleted(m: SimMovement): object {
  return { event: "charge.completed", data: flutterwaveTransaction(m), "event.type": "CARD_TRANSACTION" };
}

export const flutterwaveScript: ProviderScript = {
  provider: "flutterwave",
  refunds: false,
  money: (r) => drawMoney(r, MIX),
  paymentReference: (r) => `FLW-MOCK-${chars(r, 32, "0123456789abcdef")}`,
  refundReference: () => {
    throw new Error("Flutterwave refunds are not simulated: Tally's parser posts Flutterwave payments only");
  },
  paymentDetails: (_reference, serial) => ({ lookupId: String(285_959_875 + serial) }),
  refundAmount: () => 0,
  secondTypeOf: null,
  events: (m) => [chargeCompleted(m)],
  reformat(body, r) {
    const style = r.int(0, 3);
    if (style < 3)
      return reshape(body, { reverseKeys: style === 0, nullToEmpty: style === 1, numbersToStrings: style === 2 });
    const { meta, ...data } = (body as { data: Record<string, unknown> }).data;
    return { ...body, data: { ...data, meta_data: meta } };
  },
  ignored(r, created) {
    const kind = r.int(0, 2);
    if (kind === 0) {
      // A failed card attempt: charge.completed, but not successful.
      const [currency, minor] = drawMoney(r, MIX);
      const amount = Number(toDecimalText(BigInt(minor), currency));
      return {
        event: "charge.completed",
        data: {
          id: r.int(100_000_000, 199_999_999),
          tx_ref: `tally-sim-failed-${chars(r, 8)}`,
          flw_ref: `FLW-MOCK-${chars(r, 32, "0123456789abcdef")}`,
          amount,
          currency,
          charged_amount: amount,
          status: "failed",
          processor_response: "Insufficient funds",
          payment_type: "card",
          created_at: isoMillis(created),
          customer: { id: r.int(215_000_000, 215_099_999), email: "someone@example.com" },
        },
        "event.type": "CARD_TRANSACTION",
      };
    }
    if (kind === 1)
      return {
        event: "transfer.completed",
        "event.type": "Transfer",
        data: {
          id: r.int(400_000, 499_999),
          account_number: "0690000040",
          bank_code: "044",
          full_name: "Sim Payee",
          created_at: isoMillis(created),
          currency: "NGN",
          amount: r.int(1_000, 500_000),
          fee: 10.75,
          status: "SUCCESSFUL",
          reference: `tr-${chars(r, 10)}`,
        },
      };
    return {
      event: "subscription.cancelled",
      data: {
        id: r.int(10_000, 99_999),
        amount: 5000,
        customer: { id: r.int(215_000_000, 215_099_999), email: "someone@example.com" },
        plan: { id: r.int(1_000, 9_999), name: "monthly" },
        status: "cancelled",
      },
      "event.type": "Subscription",
    };
  },
  malformed(r, created) {
    return r.pick([
      '{"event":"charge.completed","data":{"id":',
      `{"event":"charge.completed","data":{"id":${r.int(100_000_000, 199_999_999)},"flw_ref":"FLW-MOCK-${chars(r, 32, "0123456789abcdef")}","amount":"12.505","currency":"NGN","status":"successful","created_at":"${isoMillis(created)}"}}`,
    ]);
  },
};
