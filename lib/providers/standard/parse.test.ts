import { describe, expect, it } from "vitest";
import { parseStandard } from "@/lib/providers/standard/parse";

const parse = (e: unknown) => parseStandard(Buffer.from(typeof e === "string" ? e : JSON.stringify(e)));
const payment = {
  type: "payment.succeeded",
  timestamp: "2026-12-01T10:00:00Z",
  data: { id: "pay_1", amount: 1500, currency: "gbp", account: "acct_1", created_at: "2026-12-01T09:59:58Z" },
};

describe("Standard Webhooks events to movements", () => {
  it("maps payment.succeeded", () => {
    expect(parse(payment)).toEqual({
      kind: "money",
      eventType: "payment.succeeded",
      movements: [
        {
          kind: "PAYMENT",
          reference: "pay_1",
          account: "acct_1",
          paymentReference: undefined,
          amount: 1500n,
          currency: "GBP",
          occurredAt: new Date("2026-12-01T09:59:58Z"),
          description: "Payment pay_1",
        },
      ],
    });
  });

  it("parses reformatted retries identically (strings for numbers, unix time, null vs empty)", () => {
    const expected = parse(payment);
    expect(
      parse({
        data: { ...payment.data, amount: "1500", created_at: String(Date.parse("2026-12-01T09:59:58Z") / 1000) },
        type: payment.type,
      }),
    ).toEqual(expected);
    const noAccount = parse({ ...payment, data: { ...payment.data, account: null } });
    expect(parse({ ...payment, data: { ...payment.data, account: "" } })).toEqual(noAccount);
  });

  it("maps refund.succeeded with the payment it refunds", () => {
    expect(
      parse({
        type: "refund.succeeded",
        data: { id: "ref_1", amount: 200, currency: "GBP", payment_id: "pay_1", created_at: 1764580000 },
      }),
    ).toMatchObject({
      kind: "money",
      movements: [{ kind: "REFUND", reference: "ref_1", paymentReference: "pay_1", account: null }],
    });
  });

  it("ignores other types and fails on malformed ones, naming the field", () => {
    expect(parse({ type: "invoice.created", data: {} })).toMatchObject({ kind: "ignored" });
    expect(parse({ ...payment, data: { ...payment.data, amount: "15.00" } })).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("data.amount".replace("data.", "")),
    });
    expect(parse({ type: "payment.succeeded", data: { id: "p", amount: 1, currency: "EUR" } })).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("created_at"),
    });
  });
});
