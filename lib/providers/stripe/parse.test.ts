import { describe, expect, it } from "vitest";
import { parseStripe } from "@/lib/providers/stripe/parse";
import { aStripeChargeFor, aStripePayment, aStripeRefund } from "@/dev/testing/builders";

const parse = (e: unknown) => parseStripe(Buffer.from(typeof e === "string" ? e : JSON.stringify(e)));

describe("Stripe events to movements", () => {
  it("maps payment_intent.succeeded to a payment keyed by the payment intent", () => {
    const e = aStripePayment({ reference: "pi_123", amount: 1250n, currency: "eur", account: "acct_9" });
    expect(parse(e)).toEqual({
      kind: "money",
      eventType: "payment_intent.succeeded",
      movements: [
        {
          kind: "PAYMENT",
          reference: "pi_123",
          account: "acct_9",
          amount: 1250n,
          currency: "EUR",
          occurredAt: new Date(e.created * 1000),
          description: "Stripe payment pi_123",
        },
      ],
    });
  });

  it("posts an intent's payment from payment_intent.succeeded only: charge.succeeded naming the intent is ignored, whatever its date", () => {
    const e = aStripePayment({ reference: "pi_same" });
    const charge = aStripeChargeFor(e);
    const later = { ...charge, data: { object: { ...charge.data.object, created: e.created + 3 * 86_400 } } };
    for (const c of [charge, later, { ...later, type: "charge.captured" }])
      expect(parse(c)).toMatchObject({
        kind: "ignored",
        reason: expect.stringContaining("payment_intent.succeeded for pi_same"),
      });
    const legacy = { ...charge, data: { object: { ...charge.data.object, payment_intent: null, id: "ch_legacy" } } };
    expect(parse(legacy)).toMatchObject({
      kind: "money",
      movements: [{ kind: "PAYMENT", reference: "ch_legacy", occurredAt: new Date(charge.data.object.created * 1000) }],
    });
  });

  it("reads amounts in Stripe's units: MGA zero-decimal, ISK and UGX ×100, KWD three-decimal, all to ISO 4217 minor units", () => {
    const cases: [string, number, bigint][] = [
      ["mga", 5000, 500000n],
      ["isk", 150000, 1500n],
      ["ugx", 370000, 3700n],
      ["kwd", 1234, 1234n],
      ["jpy", 1500, 1500n],
      ["usd", 1250, 1250n],
    ];
    for (const [currency, stripe, iso] of cases) {
      const e = aStripePayment({ currency, amount: BigInt(stripe) });
      expect(parse(e)).toMatchObject({ kind: "money", movements: [{ amount: iso, currency: currency.toUpperCase() }] });
    }
    const refund = aStripeRefund({ payment: "pi_isk", currency: "isk", amount: 50000 });
    expect(parse(refund)).toMatchObject({ kind: "money", movements: [{ amount: 500n, currency: "ISK" }] });
    // Stripe requires ISK in whole krónur: 150050 is not money Tally can hold exactly.
    expect(parse(aStripePayment({ currency: "isk", amount: 150050n }))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("refusing to round"),
    });
  });

  it("parses reformatted retries to the identical movement", () => {
    const e = aStripePayment({ reference: "pi_fmt", amount: 990n, account: null });
    const pi = { ...e.data.object, customer: "cus_7" };
    const original = { ...e, data: { object: pi } };
    const variants = [
      JSON.stringify(original, null, 4),
      { ...original, data: { object: Object.fromEntries(Object.entries(pi).reverse()) } },
      {
        ...original,
        created: String(original.created),
        data: { object: { ...pi, amount_received: "990", amount: "990", metadata: null } },
      },
      { ...original, data: { object: { ...pi, metadata: { account: "" } } } },
    ];
    const expected = parse(original);
    expect(expected.kind === "money" && expected.movements[0]!.account).toBe("cus_7");
    for (const v of variants) expect(parse(v)).toEqual(expected);
  });

  it("prefers metadata.account over customer", () => {
    const e = aStripePayment({ account: "acct_meta" });
    const r = parse({ ...e, data: { object: { ...e.data.object, customer: "cus_x" } } });
    expect(r.kind === "money" && r.movements[0]!.account).toBe("acct_meta");
  });

  it("maps a succeeded refund, naming the payment for its account, and ignores pending ones", () => {
    const refund = aStripeRefund({ reference: "re_1", payment: "pi_paid", amount: 300 });
    expect(parse(refund)).toMatchObject({
      kind: "money",
      movements: [{ kind: "REFUND", reference: "re_1", paymentReference: "pi_paid", amount: 300n, account: null }],
    });
    const pending = { ...refund, data: { object: { ...refund.data.object, status: "pending" } } };
    expect(parse(pending)).toMatchObject({ kind: "ignored", reason: "refund status is pending, not succeeded" });
  });

  it("maps charge.refunded with its refund list, one movement per succeeded refund", () => {
    const e = aStripeChargeFor(aStripePayment({ reference: "pi_r", account: "acct_r" }));
    const charge = {
      ...e,
      type: "charge.refunded",
      data: {
        object: {
          ...e.data.object,
          refunds: {
            data: [
              { id: "re_a", amount: 100, currency: "usd", status: "succeeded", payment_intent: "pi_r", metadata: {} },
              { id: "re_b", amount: 50, currency: "usd", status: "failed", payment_intent: "pi_r", metadata: {} },
            ],
          },
        },
      },
    };
    expect(parse(charge)).toMatchObject({
      kind: "money",
      movements: [{ kind: "REFUND", reference: "re_a", account: "acct_r", amount: 100n }],
    });
    const bare = { ...e, type: "charge.refunded" };
    expect(parse(bare)).toMatchObject({ kind: "ignored" });
  });

  it("ignores an authorisation that was not captured, and types that move no money", () => {
    const e = aStripeChargeFor(aStripePayment());
    expect(parse({ ...e, data: { object: { ...e.data.object, captured: false } } })).toMatchObject({
      kind: "ignored",
      reason: expect.stringContaining("not captured"),
    });
    expect(parse({ id: "evt", type: "customer.updated", created: 1, data: { object: {} } })).toEqual({
      kind: "ignored",
      eventType: "customer.updated",
      reason: "event type moves no money",
    });
  });

  it("fails, naming the field, on malformed money", () => {
    const e = aStripePayment();
    expect(parse({ ...e, data: { object: { ...e.data.object, amount_received: 12.5 } } })).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("amount_received"),
    });
    expect(parse({ ...e, data: { object: { ...e.data.object, currency: "dollars" } } })).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("currency must be a three-letter ISO 4217 code"),
    });
    expect(parse("[1,2")).toMatchObject({ kind: "failed", error: expect.stringContaining("not valid JSON") });
    expect(parse({ hello: "world" })).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("not a Stripe event"),
    });
  });
});
