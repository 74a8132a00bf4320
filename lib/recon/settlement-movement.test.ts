import { describe, expect, it } from "vitest";
import { parseSettlementMovement, settlementMovementBody } from "@/lib/recon/settlement-movement";

const source = { runId: 7n, row: 3, line: "raw line" };
const at = new Date("2026-11-02T10:00:00.000Z");

describe("a settlement movement's body", () => {
  it("carries a payout's bank account and arrival day through to the movement", () => {
    const body = settlementMovementBody(
      {
        kind: "PAYOUT",
        reference: "MerchantA:batch:42",
        account: "NL91ABNA0417164300",
        arrivalDate: "2026-11-04",
        amount: 98_760n,
        currency: "EUR",
        occurredAt: at,
        description: "adyen payout",
      },
      source,
    );
    const parsed = parseSettlementMovement(body);
    expect(parsed).toMatchObject({
      kind: "money",
      movements: [
        {
          kind: "PAYOUT",
          reference: "MerchantA:batch:42",
          account: "NL91ABNA0417164300",
          arrivalDate: new Date("2026-11-04T00:00:00.000Z"),
          amount: 98_760n,
        },
      ],
    });
  });

  it("reads an account only for a payout: a fee's counter account is always the provider's", () => {
    const body = JSON.parse(
      settlementMovementBody(
        { kind: "FEE", reference: "pi_1:fee", amount: 30n, currency: "USD", occurredAt: at, description: "fee" },
        source,
      ).toString(),
    );
    body.movement.account = "acct_mallory";
    const parsed = parseSettlementMovement(Buffer.from(JSON.stringify(body)));
    expect(parsed).toMatchObject({ kind: "money", movements: [{ kind: "FEE", account: null }] });
  });

  it("refuses a payout that is negative, or an arrival day that is not a date", () => {
    const payout = (amount: string, arrivalDate = "2026-11-04") =>
      Buffer.from(
        JSON.stringify({
          type: "tally.settlement_movement",
          movement: {
            kind: "PAYOUT",
            reference: "p1",
            amount,
            currency: "EUR",
            arrivalDate,
            occurredAt: at.toISOString(),
            description: "",
          },
          source: { runId: "1", row: 1, line: "" },
        }),
      );
    expect(parseSettlementMovement(payout("-5"))).toMatchObject({ kind: "failed", error: /payout cannot be negative/ });
    expect(parseSettlementMovement(payout("5", "04.11.2026"))).toMatchObject({ kind: "failed", error: /arrivalDate/ });
    expect(parseSettlementMovement(payout("5"))).toMatchObject({ kind: "money" });
  });
});
