// A Standard Webhooks sender as the day generator plays it: payment.succeeded and
// refund.succeeded (naming the payment in payment_id), sequential references per tenant.
import { cappedRefund, drawMoney, type ProviderScript } from "@/lib/providers/simulation/script";
import { LEGACY_MIX, legacyMalformed, legacyReformat } from "@/lib/providers/stripe/simulate";

const IGNORED = ["invoice.created", "customer.updated", "payment.pending"];
const iso = (unix: number) => new Date(unix * 1000).toISOString();

export const standardScript: ProviderScript = {
  provider: "standard",
  refunds: true,
  money: (r) => drawMoney(r, LEGACY_MIX),
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
