import { describe, expect, it } from "vitest";
import { parsePaystack } from "@/lib/providers/paystack/parse";
import { aPaystackCharge, aPaystackRefund } from "@/dev/testing/provider-builders";

const parse = (body: unknown) => parsePaystack(Buffer.from(typeof body === "string" ? body : JSON.stringify(body)));

describe("Paystack event parsing", () => {
  it("maps charge.success to a payment keyed by data.reference, in kobo as sent", () => {
    expect(
      parse(aPaystackCharge({ reference: "T685312322670591", amount: 250050, currency: "NGN", account: "acct_ada" })),
    ).toEqual({
      kind: "money",
      eventType: "charge.success",
      movements: [
        {
          kind: "PAYMENT",
          reference: "T685312322670591",
          account: "acct_ada",
          amount: 250050n,
          currency: "NGN",
          occurredAt: new Date("2026-12-02T14:10:19.000Z"),
          description: "Paystack payment T685312322670591",
        },
      ],
    });
  });

  it("takes the account from metadata.account, else the customer code", () => {
    const account = (body: unknown) => {
      const r = parse(body);
      return r.kind === "money" ? r.movements[0]!.account : r;
    };
    expect(account(aPaystackCharge({ account: "acct_ada" }))).toBe("acct_ada");
    expect(account(aPaystackCharge({ account: null, customerCode: "CUS_xnxdt6s1zg1f4nx" }))).toBe(
      "CUS_xnxdt6s1zg1f4nx",
    );
    const stringMeta = aPaystackCharge();
    (stringMeta.data as Record<string, unknown>).metadata = JSON.stringify({ account: "acct_from_string" });
    expect(account(stringMeta)).toBe("acct_from_string");
    const zeroMeta = aPaystackCharge({ customerCode: "CUS_zero" });
    (zeroMeta.data as Record<string, unknown>).metadata = 0; // as in Paystack's own sample payload
    expect(account(zeroMeta)).toBe("CUS_zero");
  });

  it("maps refund.processed to a refund keyed by the refund id, of the charge's reference", () => {
    expect(parse(aPaystackRefund({ id: 3018284, transactionReference: "T685312322670591", amount: "10000" }))).toEqual({
      kind: "money",
      eventType: "refund.processed",
      movements: [
        {
          kind: "REFUND",
          reference: "3018284",
          account: null,
          paymentReference: "T685312322670591",
          amount: 10000n,
          currency: "NGN",
          occurredAt: new Date("2026-12-03T09:00:00.000Z"),
          description: "Paystack refund 3018284 of T685312322670591",
        },
      ],
    });
  });

  it("reads the refunded charge from data.transaction.reference when transaction_reference is absent", () => {
    const refund = aPaystackRefund({ transactionReference: "unused" });
    const data = refund.data as Record<string, unknown>;
    delete data.transaction_reference;
    data.transaction = { id: 1004723697, reference: "T_FROM_OBJECT" };
    const r = parse(refund);
    expect(r.kind === "money" && r.movements[0]!.paymentReference).toBe("T_FROM_OBJECT");
  });

  it("refuses to guess a refund's reference: no id, no movement", () => {
    const refund = aPaystackRefund({ transactionReference: "T1" });
    delete (refund.data as Record<string, unknown>).id;
    expect(parse(refund)).toMatchObject({ kind: "failed", error: expect.stringContaining("refund.processed: id") });
  });

  it('parses a reformatted duplicate (field order, null→"", numbers→strings) to identical movements', () => {
    const charge = aPaystackCharge({ reference: "T1", amount: 10000, account: "acct_ada" });
    const reformatted = {
      data: {
        ...Object.fromEntries(Object.entries(charge.data).reverse()),
        amount: "10000",
        id: "302961",
        message: "",
        fees: "",
        currency: "ngn",
      },
      event: "charge.success",
    };
    expect(parse(JSON.stringify(reformatted, null, 2))).toEqual(parse(charge));
    const refund = aPaystackRefund({ id: 3018284, transactionReference: "T1", amount: 10000 });
    const refundReformatted = {
      event: refund.event,
      data: {
        ...refund.data,
        id: "3018284",
        amount: "10000",
        refund_reference: "",
        customer: { first_name: "", last_name: "", email: "ada@example.com" },
      },
    };
    expect(parse(refundReformatted)).toEqual(parse(refund));
  });

  it("ignores other events and refunds not yet processed", () => {
    expect(parse({ event: "transfer.success", data: {} })).toEqual({
      kind: "ignored",
      eventType: "transfer.success",
      reason: "event type moves no money",
    });
    expect(parse({ event: "refund.pending", data: {} })).toMatchObject({ kind: "ignored" });
    const odd = aPaystackRefund({ transactionReference: "T1" });
    (odd.data as Record<string, unknown>).status = "failed";
    expect(parse(odd)).toMatchObject({ kind: "ignored", reason: "refund status is failed, not processed" });
  });

  it("fails on malformed payloads, saying where", () => {
    expect(parse("{")).toMatchObject({ kind: "failed" });
    expect(
      parse({
        event: "charge.success",
        data: { reference: "T1", amount: "12.50", currency: "NGN", paid_at: "2026-12-02T00:00:00Z" },
      }),
    ).toMatchObject({ kind: "failed", error: expect.stringContaining("charge.success: amount") });
  });
});
