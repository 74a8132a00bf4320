import { describe, expect, it } from "vitest";
import { parsePaypal } from "@/lib/providers/paypal/parse";
import {
  type PaypalFundMovement,
  paypalDisputeResource,
  paypalEvent,
  paypalReversalResource,
} from "@/lib/providers/paypal/simulate";
import { aPaypalCapture, aPaypalRefund } from "@/dev/testing/provider-builders";

const parse = (body: unknown) => parsePaypal(Buffer.from(typeof body === "string" ? body : JSON.stringify(body)));

describe("PayPal event parsing", () => {
  it("maps PAYMENT.CAPTURE.COMPLETED to a payment keyed by the capture id", () => {
    expect(
      parse(aPaypalCapture({ id: "27M47624FP291604U", value: "30.00", currency: "USD", customId: "acct_alice" })),
    ).toEqual({
      kind: "money",
      eventType: "PAYMENT.CAPTURE.COMPLETED",
      movements: [
        {
          kind: "PAYMENT",
          reference: "27M47624FP291604U",
          account: "acct_alice",
          amount: 3000n,
          currency: "USD",
          occurredAt: new Date("2026-12-02T14:49:58Z"),
          description: "PayPal capture 27M47624FP291604U",
        },
        {
          kind: "FEE",
          reference: "27M47624FP291604U:fee",
          account: null,
          paymentReference: "27M47624FP291604U",
          amount: 117n,
          currency: "USD",
          occurredAt: new Date("2026-12-02T14:49:58Z"),
          description: "PayPal fee on capture 27M47624FP291604U",
          lookupId: "captures/27M47624FP291604U",
        },
      ],
    });
  });

  it("maps PAYMENT.CAPTURE.REFUNDED to a refund of the capture named by its up link", () => {
    expect(parse(aPaypalRefund({ id: "1Y107995YT783435V", captureId: "27M47624FP291604U", value: "1.00" }))).toEqual({
      kind: "money",
      eventType: "PAYMENT.CAPTURE.REFUNDED",
      movements: [
        {
          kind: "REFUND",
          reference: "1Y107995YT783435V",
          account: null,
          paymentReference: "27M47624FP291604U",
          amount: 100n,
          currency: "USD",
          occurredAt: new Date("2026-12-03T10:00:00Z"),
          description: "PayPal refund 1Y107995YT783435V of capture 27M47624FP291604U",
        },
      ],
    });
  });

  it("takes the account from custom_id, else invoice_id", () => {
    const account = (body: unknown) => {
      const r = parse(body);
      return r.kind === "money" ? r.movements[0]!.account : r;
    };
    expect(account(aPaypalCapture({ customId: "acct_c", invoiceId: "INV-1" }))).toBe("acct_c");
    expect(account(aPaypalCapture({ customId: null, invoiceId: "INV-1" }))).toBe("INV-1");
    expect(account(aPaypalCapture({ customId: null }))).toBeNull();
  });

  it("converts amounts with the currency's exponent", () => {
    const amount = (value: string, currency: string) => {
      const r = parse(aPaypalCapture({ value, currency, fee: null }));
      return r.kind === "money" ? r.movements[0]!.amount : r;
    };
    expect(amount("1500", "JPY")).toBe(1500n);
    expect(amount("0.29", "EUR")).toBe(29n);
    expect(amount("10.005", "USD")).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("refusing to round"),
    });
  });

  it("ignores other events and resources that are not COMPLETED", () => {
    expect(parse({ event_type: "CHECKOUT.ORDER.APPROVED", resource: {} })).toEqual({
      kind: "ignored",
      eventType: "CHECKOUT.ORDER.APPROVED",
      reason: "event type moves no money",
    });
    const pending = aPaypalRefund({ captureId: "C1" });
    pending.resource.status = "PENDING";
    expect(parse(pending)).toMatchObject({ kind: "ignored", reason: "resource status is PENDING, not COMPLETED" });
  });

  it('parses a reformatted duplicate (field order, number for the amount, null→"") to identical movements', () => {
    const capture = aPaypalCapture({ id: "27M47624FP291604U", value: "30.50", invoiceId: "INV-9", customId: null });
    const reformatted = {
      resource: {
        ...Object.fromEntries(Object.entries(capture.resource).reverse()),
        amount: { value: 30.5, currency_code: "usd" },
        custom_id: "",
      },
      event_type: capture.event_type,
      create_time: capture.create_time,
    };
    expect(parse(JSON.stringify(reformatted, null, 2))).toEqual(parse(capture));
    const refund = aPaypalRefund({ id: "R1", captureId: "27M47624FP291604U" });
    const refundReformatted = {
      ...refund,
      resource: {
        ...refund.resource,
        links: [...refund.resource.links].reverse(),
        amount: { currency_code: "USD", value: "1.0" },
      },
    };
    expect(parse(refundReformatted)).toEqual(parse(refund));
  });

  it("fails on malformed payloads, saying where", () => {
    expect(parse("{")).toMatchObject({ kind: "failed" });
    expect(parse({ event_type: "PAYMENT.CAPTURE.COMPLETED", resource: { id: "C1" } })).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("PAYMENT.CAPTURE.COMPLETED: amount"),
    });
  });
});

describe("PayPal fees, reversals and disputes", () => {
  const capture = "27M47624FP291604U";
  const at = Date.parse("2026-12-05T10:00:00Z") / 1000;
  const dispute = (movements: PaypalFundMovement[], o: { shape?: "fund_movements"; captureIds?: string[] } = {}) => {
    const resource: Record<string, unknown> = paypalDisputeResource({
      id: "PP-D-4242",
      captureId: capture,
      amount: 3000,
      currency: "USD",
      created: at,
      movements,
      ...(o.shape && { shape: o.shape }),
    });
    if (o.captureIds) resource.disputed_transactions = o.captureIds.map((id) => ({ seller_transaction_id: id }));
    return paypalEvent("CUSTOMER.DISPUTE.UPDATED", "dispute", resource, at);
  };
  const settle = (type: "DEBIT" | "CREDIT", amount = 3000): PaypalFundMovement => ({
    type,
    reason: "DISPUTE_SETTLEMENT",
    amount,
    currency: "USD",
    at,
  });
  const kinds = (r: ReturnType<typeof parse>) =>
    r.kind === "money" ? r.movements.map((m) => [m.kind, m.reference, m.amount]) : r;

  it("gives back the part of the fee a refund returned, as a negative FEE keyed by the refund", () => {
    const refund = aPaypalRefund({ id: "R9", captureId: capture, value: "10.00" });
    (refund.resource.seller_payable_breakdown as Record<string, unknown>).paypal_fee = {
      currency_code: "USD",
      value: "0.30",
    };
    expect(kinds(parse(refund))).toEqual([
      ["REFUND", "R9", 1000n],
      ["FEE", "R9:fee", -30n],
    ]);
  });

  it("keys a capture's reversal and the dispute's settlement debit alike (one withdrawal), the credit as its reinstatement", () => {
    const reversal = paypalEvent(
      "PAYMENT.CAPTURE.REVERSED",
      "refund",
      paypalReversalResource({ id: "REV1", captureId: capture, amount: 3000, currency: "USD", created: at, fee: 49 }),
      at,
    );
    expect(kinds(parse(reversal))).toEqual([
      ["DISPUTE", `${capture}:reversed`, 3000n],
      ["FEE", "REV1:fee", -49n],
    ]);
    expect(kinds(parse(dispute([settle("DEBIT"), settle("CREDIT")])))).toEqual([
      ["DISPUTE", `${capture}:reversed`, 3000n],
      ["DISPUTE_REVERSAL", `${capture}:reinstated`, 3000n],
    ]);
  });

  it("posts a dispute's fees by dispute, reason and direction, numbering repeats; the buyer's movements and an empty list move nothing of ours", () => {
    const fee = (type: "DEBIT" | "CREDIT", amount: number, party?: "BUYER"): PaypalFundMovement => ({
      type,
      reason: "CHARGEBACK_FEE",
      amount,
      currency: "USD",
      at,
      ...(party && { party }),
    });
    expect(
      kinds(parse(dispute([fee("DEBIT", 2000), fee("DEBIT", 500), fee("CREDIT", 2000), fee("DEBIT", 9, "BUYER")]))),
    ).toEqual([
      ["FEE", "PP-D-4242:chargeback_fee", 2000n],
      ["FEE", "PP-D-4242:chargeback_fee#2", 500n],
      ["FEE", "PP-D-4242:chargeback_fee:returned", -2000n],
    ]);
    expect(parse(dispute([]))).toMatchObject({ kind: "ignored", reason: expect.stringContaining("no movement") });
    expect(parse(dispute([fee("DEBIT", 9, "BUYER")]))).toMatchObject({ kind: "ignored" });
  });

  it("reads fund_movements (party) as it reads money_movements (affected_party), and a reformatted dispute alike", () => {
    const a = parse(dispute([settle("DEBIT")]));
    expect(parse(dispute([settle("DEBIT")], { shape: "fund_movements" }))).toEqual(a);
    const reordered = dispute([settle("DEBIT")]);
    const body = JSON.stringify(
      { ...reordered, resource: Object.fromEntries(Object.entries(reordered.resource).reverse()) },
      null,
      2,
    );
    expect(parse(body)).toEqual(a);
  });

  it("fails, naming the field, on what it cannot honestly read", () => {
    const failed = (body: unknown) => {
      const r = parse(body);
      return r.kind === "failed" ? r.error : r;
    };
    const withFee = (value: string, currency = "USD") => {
      const e = aPaypalCapture({ value: "1.00" });
      (e.resource.seller_receivable_breakdown as Record<string, unknown>).paypal_fee = {
        currency_code: currency,
        value,
      };
      return e;
    };
    expect(failed(withFee("1.50"))).toContain(
      "seller_receivable_breakdown.paypal_fee.value: 150 is more than the gross 100",
    );
    expect(failed(withFee("-0.10"))).toContain("seller_receivable_breakdown.paypal_fee.value");
    expect(failed(withFee("0.10", "EUR"))).toContain(
      "seller_receivable_breakdown.paypal_fee: in EUR, the amount in USD",
    );
    expect(failed(dispute([{ ...settle("DEBIT"), reason: "GOODWILL" as "DISPUTE_FEE" }]))).toContain(
      'money_movements[0].reason: "GOODWILL" is not one Tally knows',
    );
    expect(failed(dispute([{ ...settle("DEBIT"), type: "HOLD" as "DEBIT" }]))).toContain(
      'money_movements[0].type: "HOLD" is neither DEBIT nor CREDIT',
    );
    expect(failed(dispute([settle("DEBIT")], { captureIds: ["C1", "C2"] }))).toContain("over 2 transactions");
    expect(failed(dispute([settle("DEBIT")], { captureIds: [] }))).toContain("no named transaction");
    const noUp = paypalEvent(
      "PAYMENT.CAPTURE.REVERSED",
      "refund",
      {
        ...paypalReversalResource({ id: "REV2", captureId: capture, amount: 100, currency: "USD", created: at }),
        links: [],
      },
      at,
    );
    expect(failed(noUp)).toContain("no `up` link naming the reversed capture");
  });
});
