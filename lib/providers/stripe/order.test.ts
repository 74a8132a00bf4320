// One payment announced by Stripe's equivalent events (payment_intent.succeeded, and
// charge.succeeded made days after the intent; one refund as refund.created and in
// charge.refunded's list), delivered in every order through the webhook route and the
// worker: the canonical ledger export (what the replay compares) is the same, byte for
// byte, whichever event arrives first.
import { describe, expect, it } from "vitest";
import { exportLedger, ledgerJson } from "@/lib/ledger/export";
import { aStripeChargeFor, aStripePayment, aStripeRefund, aTenant, stripeRequest } from "@/dev/testing/builders";
import { drain, drainAll } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";

const DAY = 86_400;

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

function equivalentEvents() {
  const intentCreated = 1_764_500_000;
  const payment = aStripePayment({
    reference: "pi_order_1",
    amount: 4200n,
    account: "acct_order",
    created: intentCreated,
  });
  const charge = aStripeChargeFor(payment);
  // The customer confirmed three days after the intent was created: the charge (and its event) is three days younger.
  charge.created = intentCreated + 3 * DAY;
  charge.data.object.created = intentCreated + 3 * DAY;
  const refund = aStripeRefund({ reference: "re_order_1", payment: "pi_order_1", amount: 1200 });
  refund.created = intentCreated + 4 * DAY;
  refund.data.object.created = intentCreated + 4 * DAY;
  const refunded = {
    ...charge,
    id: "evt_charge_refunded",
    type: "charge.refunded",
    created: intentCreated + 5 * DAY,
    data: { object: { ...charge.data.object, refunds: { data: [{ ...refund.data.object }] } } },
  };
  return {
    payment: payment as object,
    charge: charge as object,
    refund: refund as object,
    refunded: refunded as object,
  };
}

describe("the ledger does not depend on which equivalent Stripe event arrives first", () => {
  it("every order of payment_intent.succeeded, a later charge.succeeded, refund.created and charge.refunded exports byte-identical ledgers", async () => {
    const events = equivalentEvents();
    const orders = permutations(Object.keys(events) as (keyof typeof events)[]);
    expect(orders).toHaveLength(24);
    const exports = new Map<string, string[]>();
    for (const order of orders) {
      const tenant = await aTenant();
      for (const name of order) {
        expect((await deliver(stripeRequest(tenant, events[name]))).status).toBe(200);
        // Processed before the next arrives, so the worker sees this order (a refund before its payment waits).
        await drain();
      }
      await drainAll();
      const json = ledgerJson(await exportLedger(tenant.id, "tenant")).replace(tenant.slug, "tenant");
      exports.set(json, [...(exports.get(json) ?? []), order.join(" → ")]);
    }
    // One distinct export for all 24 orders (on failure, the orders behind each variant are shown).
    expect([...exports.values()].map((o) => o.length)).toEqual([24]);
    const [json] = [...exports.keys()];
    const ledger = JSON.parse(json!);
    expect(ledger.postings).toEqual([
      expect.objectContaining({
        reference: "pi_order_1",
        kind: "PAYMENT",
        occurredAt: new Date(1_764_500_000 * 1000).toISOString(),
      }),
      expect.objectContaining({
        reference: "re_order_1",
        kind: "REFUND",
        occurredAt: new Date((1_764_500_000 + 4 * DAY) * 1000).toISOString(),
      }),
    ]);
  });
});
