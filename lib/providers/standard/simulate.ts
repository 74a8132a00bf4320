// A Standard Webhooks sender as the day generator plays it: payment.succeeded and
// refund.succeeded (naming the payment in payment_id), sequential references per tenant.
import { cappedRefund, drawMoney, type CurrencyMix, type ProviderScript } from "@/lib/providers/simulation/script";
import { legacyMalformed, legacyReformat } from "@/lib/providers/stripe/simulate";

const MIX: CurrencyMix = [
  ["USD", 50, 100, 250_000],
  ["EUR", 25, 100, 200_000],
  ["GBP", 12, 100, 150_000],
  ["JPY", 8, 100, 60_000],
  ["KWD", 5, 1_000, 400_000],
];

const IGNORED = ["invoice.created", "customer.updated", "payment.pending"];
const iso = (unix: number) => new Date(unix * 1000).toISOString();

export const standardScript: ProviderScript = {
  provider: "standard",
  refunds: true,
  money: (r) => drawMoney(r, MIX),
  paymentReference: (_r, n) => `pay_${String(n).padStart(6, "0")}`,
  refundReference: (_r, n) => `ref_${String(n).padStart(6, "0")}`,
  refundAmount: cappedRefund,
  // Drawn for payments, though this sender has no second type: kept so seeds give the same day.
  secondTypeOf: "PAYMENT",
  events(m) {
    const data = {
      id: m.reference,
      amount: m.amount,
      currency: m.currency,
      account: m.kind === "PAYMENT" ? m.account : null,
      payment_id: m.paymentReference ?? null,
      created_at: iso(m.created),
    };
    return [{ type: m.kind === "PAYMENT" ? "payment.succeeded" : "refund.succeeded", timestamp: iso(m.created), data }];
  },
  reformat: legacyReformat,
  ignored(r, created) {
    const type = r.pick(IGNORED);
    return { type, timestamp: iso(created), data: { id: r.id("inv_", 12) } };
  },
  malformed: legacyMalformed,
};
