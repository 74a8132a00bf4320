import { describe, expect, it } from "vitest";
import { parseFlutterwave } from "@/lib/providers/flutterwave/parse";
import { aFlutterwaveCharge } from "@/dev/testing/provider-builders";

const parse = (body: unknown) => parseFlutterwave(Buffer.from(typeof body === "string" ? body : JSON.stringify(body)));

describe("Flutterwave event parsing", () => {
  it("maps a successful charge.completed to a payment keyed by flw_ref, major units to minor", () => {
    const charge = aFlutterwaveCharge({
      id: 285959875,
      flwRef: "PeterEkene/FLW270177170",
      txRef: "Links-616626414629",
      amount: 100,
      currency: "NGN",
    });
    expect(parse(charge)).toEqual({
      kind: "money",
      eventType: "charge.completed",
      movements: [
        {
          kind: "PAYMENT",
          reference: "PeterEkene/FLW270177170",
          account: "215604089",
          amount: 10000n,
          currency: "NGN",
          occurredAt: new Date("2026-12-02T14:17:04.000Z"),
          description: "Flutterwave payment PeterEkene/FLW270177170 (Links-616626414629)",
          lookupId: "285959875",
        },
      ],
    });
  });

  it("converts amounts exactly with the currency's exponent", () => {
    const amount = (a: number | string, currency: string) => {
      const r = parse(aFlutterwaveCharge({ amount: a, currency }));
      return r.kind === "money" ? r.movements[0]!.amount : r;
    };
    expect(amount(1.15, "USD")).toBe(115n);
    expect(amount("2500.50", "KES")).toBe(250050n);
    expect(amount(5000, "UGX")).toBe(5000n);
    expect(amount(5000, "XOF")).toBe(5000n);
    expect(amount("12.345", "KWD")).toBe(12345n);
    expect(amount(10.555, "NGN")).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("refusing to round"),
    });
  });

  it("takes the account from meta.account when the merchant set it", () => {
    const r = parse(aFlutterwaveCharge({ account: "acct_yemi" }));
    expect(r.kind === "money" && r.movements[0]!.account).toBe("acct_yemi");
  });

  it("ignores failed and pending charges and other events", () => {
    expect(parse(aFlutterwaveCharge({ status: "failed" }))).toEqual({
      kind: "ignored",
      eventType: "charge.completed",
      reason: "charge status is failed, not successful",
    });
    expect(parse({ event: "transfer.completed", data: { status: "SUCCESSFUL" } })).toMatchObject({
      kind: "ignored",
      reason: "event type moves no money",
    });
  });

  it('parses a reformatted duplicate (field order, numbers→strings, null→"") to identical movements', () => {
    const charge = aFlutterwaveCharge({ id: 285959875, flwRef: "FLW-MOCK-1", amount: 1500.5, currency: "GHS" });
    const reformatted = {
      "event.type": "CARD_TRANSACTION",
      data: {
        ...Object.fromEntries(Object.entries(charge.data).reverse()),
        id: "285959875",
        amount: "1500.50",
        app_fee: "1.4",
        customer: { ...charge.data.customer, id: "215604089", phone_number: "" },
      },
      event: "charge.completed",
    };
    expect(parse(JSON.stringify(reformatted, null, 2))).toEqual(parse(charge));
  });

  it("fails on malformed payloads, saying where", () => {
    expect(parse("{")).toMatchObject({ kind: "failed" });
    expect(
      parse({
        event: "charge.completed",
        data: { status: "successful", id: 1, amount: 1, currency: "NGN", created_at: "2026-12-02T00:00:00Z" },
      }),
    ).toMatchObject({ kind: "failed", error: expect.stringContaining("flw_ref") });
    expect(parse({ "event.type": "CARD_TRANSACTION", txRef: "x" })).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("not a Flutterwave v3 event"),
    });
  });
});
