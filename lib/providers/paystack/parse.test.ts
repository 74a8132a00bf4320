import { describe, expect, it } from "vitest";
import { parsePaystack } from "@/lib/providers/paystack/parse";
import { aPaystackCharge, aPaystackRefund } from "@/dev/testing/provider-builders";
import { paystackDispute, paystackDisputeEvents, type SimDispute } from "@/lib/providers/paystack/simulate";

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

const withFees = (fees: unknown, o: Parameters<typeof aPaystackCharge>[0] = {}) => {
  const c = aPaystackCharge({ reference: "T1", amount: 10000, ...o });
  return { ...c, data: { ...c.data, fees } };
};
const aDispute = (o: Partial<SimDispute> = {}): SimDispute => ({
  id: 358950,
  payment: {
    tenant: "t",
    provider: "paystack",
    kind: "PAYMENT",
    reference: "T685312322670591",
    account: "acct_ada",
    amount: 5800,
    currency: "NGN",
    created: 1_796_000_000,
  },
  refundAmount: 5800,
  outcome: "lost",
  created: 1_796_000_100,
  resolved: 1_796_090_000,
  ...o,
});
const resolve = (d: SimDispute, patch: Record<string, unknown> = {}) => ({
  event: "charge.dispute.resolve",
  data: { ...paystackDispute(d, "resolved"), ...patch },
});

describe("Paystack fees", () => {
  it("posts charge.success's data.fees as a FEE keyed <reference>:fee, of the charge, dated like it", () => {
    const r = parse(withFees(150));
    expect(r).toMatchObject({ kind: "money", eventType: "charge.success" });
    expect(r.kind === "money" && r.movements).toEqual([
      expect.objectContaining({ kind: "PAYMENT", reference: "T1", amount: 10000n }),
      {
        kind: "FEE",
        reference: "T1:fee",
        account: null,
        paymentReference: "T1",
        amount: 150n,
        currency: "NGN",
        occurredAt: new Date("2026-12-02T14:10:19.000Z"),
        description: "Paystack fee on T1",
      },
    ]);
    // As a string in a reformatted retry: the same fee.
    expect(parse(withFees("150"))).toEqual(r);
  });

  it('posts no fee when the webhook does not say one (null as Paystack\'s sample sends, "", 0, absent)', () => {
    for (const fees of [null, "", 0, undefined]) {
      const r = parse(withFees(fees));
      expect(r.kind === "money" && r.movements.map((m) => m.kind)).toEqual(["PAYMENT"]);
    }
  });

  it("keys a retry whose fee changed the same, so it can never post a second fee", () => {
    const a = parse(withFees(150));
    const b = parse(withFees(175));
    const feeOf = (x: typeof a) => (x.kind === "money" ? x.movements.find((m) => m.kind === "FEE") : undefined);
    expect(feeOf(a)?.reference).toBe(feeOf(b)?.reference);
    expect([feeOf(a)?.amount, feeOf(b)?.amount]).toEqual([150n, 175n]);
  });

  it("fails a negative fee, a fee larger than the charge and a fractional fee, naming data.fees", () => {
    expect(parse(withFees(-5))).toEqual({
      kind: "failed",
      error: "charge.success: fees: cannot be negative, got -5 (it is what Paystack keeps of the charge)",
    });
    expect(parse(withFees(10001))).toEqual({
      kind: "failed",
      error: "charge.success: fees: 10001 is more than the charge's amount 10000; a fee is part of what was charged",
    });
    expect(parse(withFees("1.5"))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("charge.success: fees: must be an integer number of minor units"),
    });
    expect(parse(withFees(1.5))).toMatchObject({ kind: "failed", error: expect.stringContaining("fees") });
  });

  it("fails a charge in a currency that is not ISO 4217, with its fee", () => {
    expect(parse(withFees(150, { currency: "NAIRA" }))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("charge.success: currency: currency must be a three-letter ISO 4217 code"),
    });
  });
});

describe("Paystack disputes", () => {
  it("a lost dispute (merchant-accepted) withdraws its refund_amount at resolution, keyed by the dispute's id", () => {
    expect(parse(resolve(aDispute({ refundAmount: 2500 })))).toEqual({
      kind: "money",
      eventType: "charge.dispute.resolve",
      movements: [
        {
          kind: "DISPUTE",
          reference: "dsp_358950",
          account: null,
          paymentReference: "T685312322670591",
          amount: 2500n,
          currency: "NGN",
          occurredAt: new Date(1_796_090_000 * 1000),
          description: "Paystack dispute 358950 on T685312322670591 lost (merchant-accepted)",
        },
      ],
    });
  });

  it("auto-accepted, as in Paystack's published resolve sample, is lost too", () => {
    const r = parse(resolve(aDispute(), { resolution: "auto-accepted" }));
    expect(r.kind === "money" && r.movements[0]).toMatchObject({ kind: "DISPUTE", amount: 5800n });
  });

  it("a won dispute (declined), and a dispute being opened or reminded, move nothing", () => {
    expect(parse(resolve(aDispute({ outcome: "won" })))).toEqual({
      kind: "ignored",
      eventType: "charge.dispute.resolve",
      reason: "dispute 358950 was declined: the merchant won and Paystack took nothing",
    });
    const [create, remind] = paystackDisputeEvents(aDispute());
    for (const e of [create, remind])
      expect(parse(e)).toMatchObject({ kind: "ignored", reason: expect.stringContaining("only when it is resolved") });
  });

  it("a reformatted retry of the resolution parses to the same movement", () => {
    const body = resolve(aDispute());
    const reformatted = {
      data: { ...body.data, id: "358950", refund_amount: "5800", currency: "ngn", transaction_reference: "" },
      event: body.event,
    };
    expect(parse(JSON.stringify(reformatted, null, 2))).toEqual(parse(body));
  });

  it("fails a resolution without an id, without an amount, in no currency, above the charge, or of an unknown resolution", () => {
    const body = resolve(aDispute());
    const { id: _id, ...noId } = body.data;
    expect(parse({ event: body.event, data: noId })).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("charge.dispute.resolve: id:"),
    });
    expect(parse(resolve(aDispute(), { refund_amount: null }))).toEqual({
      kind: "failed",
      error: "charge.dispute.resolve: refund_amount: missing on a dispute resolved merchant-accepted",
    });
    expect(
      parse(resolve(aDispute(), { currency: null, transaction: { reference: "T685312322670591", amount: 5800 } })),
    ).toEqual({ kind: "failed", error: "charge.dispute.resolve: currency: missing, and no transaction.currency" });
    expect(parse(resolve(aDispute(), { currency: "XYZ" }))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("charge.dispute.resolve: currency:"),
    });
    expect(parse(resolve(aDispute({ refundAmount: 5801 })))).toEqual({
      kind: "failed",
      error: "charge.dispute.resolve: refund_amount: 5801 is more than the disputed charge's amount 5800",
    });
    expect(parse(resolve(aDispute(), { resolution: "partially-won" }))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining('resolution: "partially-won" is not one Tally knows'),
    });
    expect(parse(resolve(aDispute(), { refund_amount: -1 }))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("refund_amount"),
    });
  });

  it("ignores the refund by which Paystack carries out a lost dispute: the dispute is its one withdrawal", () => {
    const refund = aPaystackRefund({ transactionReference: "T685312322670591", amount: 5800 });
    expect(parse({ ...refund, data: { ...refund.data, dispute: 358950 } })).toEqual({
      kind: "ignored",
      eventType: "refund.processed",
      reason: "the refund of dispute 358950: posted as dsp_358950 when the dispute resolves, never twice",
    });
    expect(parse({ ...refund, data: { ...refund.data, dispute: null } })).toMatchObject({ kind: "money" });
  });

  it("keeps a refund.processed naming no dispute a REFUND, whichever way its data says none", () => {
    const refund = aPaystackRefund({ id: 3018290, transactionReference: "T685312322670591", amount: 5800 });
    const asRefund = {
      kind: "money",
      eventType: "refund.processed",
      movements: [
        expect.objectContaining({
          kind: "REFUND",
          reference: "3018290",
          paymentReference: "T685312322670591",
          amount: 5800n,
        }),
      ],
    };
    expect("dispute" in refund.data).toBe(false);
    expect(parse(refund)).toEqual(asRefund);
    // As Paystack's refund objects write "none": null, and the empty forms a reformatted retry may carry.
    for (const dispute of [null, 0, "", " ", "0", {}, { id: null }, { id: 0 }])
      expect({ dispute, parsed: parse({ ...refund, data: { ...refund.data, dispute } }) }).toEqual({
        dispute,
        parsed: asRefund,
      });
  });

  it("ignores a refund.processed naming its dispute by an object {id: 45}, a bare number or its text, as that dispute's", () => {
    const refund = aPaystackRefund({ id: 3018291, transactionReference: "T685312322670591", amount: 5800 });
    for (const dispute of [{ id: 45 }, 45, "45", { id: "45" }])
      expect({ dispute, parsed: parse({ ...refund, data: { ...refund.data, dispute } }) }).toEqual({
        dispute,
        parsed: {
          kind: "ignored",
          eventType: "refund.processed",
          reason: "the refund of dispute 45: posted as dsp_45 when the dispute resolves, never twice",
        },
      });
  });
});
