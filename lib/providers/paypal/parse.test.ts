import { describe, expect, it } from "vitest";
import { parsePaypal } from "@/lib/providers/paypal/parse";
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
      const r = parse(aPaypalCapture({ value, currency }));
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
