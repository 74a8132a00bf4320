import { describe, expect, it } from "vitest";
import { parseAdyen } from "@/lib/providers/adyen/parse";
import { anAdyenBatch, anAdyenItem } from "@/dev/testing/provider-builders";

const parse = (body: unknown) => parseAdyen(Buffer.from(typeof body === "string" ? body : JSON.stringify(body)));

describe("Adyen notification parsing", () => {
  it("maps a successful AUTHORISATION to a payment keyed by pspReference", () => {
    const item = anAdyenItem({
      pspReference: "8816178952380553",
      value: 1130,
      currency: "EUR",
      eventDate: "2026-12-02T15:04:05+01:00",
    });
    expect(parse(anAdyenBatch([item]))).toEqual({
      kind: "money",
      eventType: "AUTHORISATION",
      movements: [
        {
          kind: "PAYMENT",
          reference: "8816178952380553",
          account: "acct_alice",
          amount: 1130n,
          currency: "EUR",
          occurredAt: new Date("2026-12-02T14:04:05Z"),
          description: "Adyen payment 8816178952380553",
        },
      ],
    });
  });

  it("maps a successful REFUND to a refund of originalReference, and a batch to several movements", () => {
    const payment = anAdyenItem({ pspReference: "8816178952380553" });
    const refund = anAdyenItem({
      eventCode: "REFUND",
      pspReference: "8516178952380999",
      originalReference: "8816178952380553",
      value: 500,
      additionalData: {},
      merchantReference: "refund-8516",
    });
    const r = parse(anAdyenBatch([payment, refund]));
    expect(r).toMatchObject({ kind: "money", eventType: "AUTHORISATION,REFUND" });
    expect(r.kind === "money" && r.movements[1]).toEqual({
      kind: "REFUND",
      reference: "8516178952380999",
      account: null,
      paymentReference: "8816178952380553",
      amount: 500n,
      currency: "EUR",
      occurredAt: new Date("2026-12-02T14:04:05Z"),
      description: "Adyen refund 8516178952380999 of 8816178952380553",
    });
  });

  it("reads the account only from the signed merchantReference (<account>/<order>), never from unsigned additionalData", () => {
    const account = (merchantReference: string, additionalData: Record<string, unknown> = {}) => {
      const r = parse(anAdyenBatch([anAdyenItem({ additionalData, merchantReference })]));
      return r.kind === "money" ? r.movements[0]!.account : r;
    };
    expect(account("acct_alice/order-77")).toBe("acct_alice");
    expect(account("acct_alice/order/77")).toBe("acct_alice");
    // What issue #17 saw credited: additionalData is outside the HMAC, so it names no one.
    expect(
      account("acct_alice/order-77", {
        "metadata.account": "acct_mallory",
        metadata: { account: "acct_mallory" },
        shopperReference: "acct_mallory",
      }),
    ).toBe("acct_alice");
    expect(account("order-77", { "metadata.account": "acct_mallory", shopperReference: "shopper_s" })).toBeNull();
    expect(account("/order-77")).toBeNull();
  });

  it("maps a dispute's CHARGEBACK, CHARGEBACK_REVERSED and SECOND_CHARGEBACK to its withdrawals and reinstatement, keyed by the dispute; notices move nothing", () => {
    const common = { pspReference: "9915555555555555", originalReference: "8816178952380553", value: 1000 };
    const r = parse(
      anAdyenBatch([
        anAdyenItem({ ...common, eventCode: "NOTIFICATION_OF_CHARGEBACK" }),
        anAdyenItem({ ...common, eventCode: "CHARGEBACK" }),
        anAdyenItem({ ...common, eventCode: "CHARGEBACK_REVERSED" }),
        anAdyenItem({ ...common, eventCode: "SECOND_CHARGEBACK" }),
      ]),
    );
    expect(
      r.kind === "money" && r.movements.map((m) => [m.kind, m.reference, m.paymentReference, m.account, m.amount]),
    ).toEqual([
      ["DISPUTE", "9915555555555555", "8816178952380553", null, 1000n],
      ["DISPUTE_REVERSAL", "9915555555555555:reinstated", "8816178952380553", null, 1000n],
      ["DISPUTE", "9915555555555555:second", "8816178952380553", null, 1000n],
    ]);
    const orphan = parse(anAdyenBatch([anAdyenItem({ eventCode: "CHARGEBACK", pspReference: "9915555555555556" })]));
    expect(orphan).toMatchObject({ kind: "failed", error: expect.stringContaining("originalReference: missing") });
  });

  it("ignores failed items, other event codes, zero amounts; a batch moving no money is ignored", () => {
    const r = parse(
      anAdyenBatch([
        anAdyenItem({ success: "false" }),
        anAdyenItem({ eventCode: "CAPTURE" }),
        anAdyenItem({ eventCode: "REPORT_AVAILABLE" }),
        anAdyenItem({ value: 0 }),
      ]),
    );
    expect(r).toEqual({
      kind: "ignored",
      eventType: "AUTHORISATION,CAPTURE,REPORT_AVAILABLE",
      reason: "no successful AUTHORISATION, REFUND or chargeback with an amount in the batch",
    });
    const mixed = parse(
      anAdyenBatch([anAdyenItem({ success: "false" }), anAdyenItem({ pspReference: "PAID000000000001" })]),
    );
    expect(mixed.kind === "money" && mixed.movements.map((m) => m.reference)).toEqual(["PAID000000000001"]);
  });

  it('parses a reformatted duplicate (field order, null→"", numbers→strings, booleans) to identical movements', () => {
    const item = anAdyenItem({ pspReference: "8816178952380553", value: 1130 });
    const refund = anAdyenItem({
      eventCode: "REFUND",
      pspReference: "8516178952380999",
      originalReference: "8816178952380553",
      value: 500,
      additionalData: { shopperReference: null },
      merchantReference: "refund-8516",
    });
    const original = parse(anAdyenBatch([item, refund]));
    const reformatted = {
      notificationItems: [
        {
          NotificationRequestItem: {
            ...Object.fromEntries(Object.entries(item).reverse()),
            amount: { currency: "EUR", value: "1130" },
            success: true,
            originalReference: "",
          },
        },
        {
          NotificationRequestItem: {
            ...refund,
            amount: { value: "500", currency: "eur" },
            success: "true",
            additionalData: { shopperReference: "" },
            merchantReference: null,
          },
        },
      ],
      live: "false",
    };
    expect(original.kind).toBe("money");
    expect(parse(JSON.stringify(reformatted, null, 2))).toEqual(original);
  });

  it("fails, without posting part of it, a batch with a malformed money item", () => {
    const broken = { ...anAdyenItem(), amount: { value: "12.50", currency: "EUR" } };
    expect(parse(anAdyenBatch([anAdyenItem(), broken]))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("notificationItems[1] AUTHORISATION: amount.value"),
    });
    expect(parse(anAdyenBatch([anAdyenItem({ eventCode: "REFUND" })]))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("originalReference: missing"),
    });
    expect(parse("{")).toMatchObject({ kind: "failed" });
    expect(parse({ notificationItems: [] })).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("not an Adyen notification batch"),
    });
  });
});
