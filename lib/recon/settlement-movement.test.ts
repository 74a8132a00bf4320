import { describe, expect, it } from "vitest";
import { BANK_REFERENCE_MAX_CHARS } from "@/lib/providers/types";
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

describe("a settlement movement's bank reference", () => {
  const payout = (o: Record<string, unknown>) =>
    Buffer.from(
      JSON.stringify({
        type: "tally.settlement_movement",
        movement: {
          kind: "PAYOUT",
          reference: "MerchantA:batch:42:EUR",
          amount: "98760",
          currency: "EUR",
          occurredAt: at.toISOString(),
          description: "",
          ...o,
        },
        source: { runId: "1", row: 1, line: "" },
      }),
    );

  it("carries a payout's bank reference through to the movement, trimmed, and no other kind's", () => {
    const body = settlementMovementBody(
      {
        kind: "PAYOUT",
        reference: "MerchantA:batch:42:EUR",
        bankReference: "TX000000000042XT batch 42, MerchantA",
        amount: 98_760n,
        currency: "EUR",
        occurredAt: at,
        description: "adyen payout",
      },
      source,
    );
    expect(parseSettlementMovement(body)).toMatchObject({
      kind: "money",
      movements: [{ kind: "PAYOUT", bankReference: "TX000000000042XT batch 42, MerchantA" }],
    });
    expect(parseSettlementMovement(payout({ bankReference: "  TX1 batch 1, M  " }))).toMatchObject({
      movements: [{ bankReference: "TX1 batch 1, M" }],
    });
    const fee = parseSettlementMovement(payout({ kind: "FEE", reference: "pi_1:fee", bankReference: "TX1 batch 1" }));
    expect(fee).toMatchObject({ kind: "money" });
    expect((fee as { movements: { bankReference?: string }[] }).movements[0]!.bankReference).toBeUndefined();
  });

  it("refuses a bank reference that is empty or longer than the bound, naming the field", () => {
    expect(parseSettlementMovement(payout({ bankReference: "   " }))).toMatchObject({
      kind: "failed",
      error: /bankReference/,
    });
    expect(parseSettlementMovement(payout({ bankReference: "x".repeat(BANK_REFERENCE_MAX_CHARS + 1) }))).toMatchObject({
      kind: "failed",
      error: /bankReference/,
    });
    expect(parseSettlementMovement(payout({ bankReference: "x".repeat(BANK_REFERENCE_MAX_CHARS) }))).toMatchObject({
      kind: "money",
    });
  });
});
