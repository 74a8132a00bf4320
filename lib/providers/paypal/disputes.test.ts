// PayPal's fees, reversals and disputes through the signed webhook route, the worker and
// PayPal's API (a real local server answering as PayPal: dev/simulator/paypal-api.ts):
// what each posts, that a chargeback told twice (the capture's reversal and the
// dispute's settlement) withdraws once, that a payment is never taken back past its
// amount, and that a dispute body PayPal's API does not confirm posts nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balancesByCode } from "@/lib/ledger/accounts";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { prisma } from "@/lib/platform/db";
import {
  captureResource,
  type PaypalFundMovement,
  paypalDisputeResource,
  paypalEvent,
  paypalReversalResource,
  refundResource,
} from "@/lib/providers/paypal/simulate";
import type { SimMovement } from "@/lib/providers/simulation/script";
import type { PaypalAccounts } from "@/dev/simulator/paypal-api";
import { startPaypalTestServer, type PaypalTestServer } from "@/dev/testing/paypal-server";
import { aTenant, type TestTenant, unique, webhookRequest } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { anEndpoint, type PaypalSigner, paypalHeaders } from "@/dev/testing/provider-builders";
import { postingsByPrefix } from "@/dev/testing/postings";
import { deliver } from "@/dev/testing/route";

const webhookId = "WH-DISPUTES-0123456789";
const app = { clientId: "AV-disputes-client", clientSecret: "EP-disputes-secret" };
const created = Date.parse("2026-12-02T14:49:58Z") / 1000;
let tenant: TestTenant;
let signer: PaypalSigner;
let api: PaypalTestServer;
let paypal: PaypalAccounts;

beforeAll(async () => {
  api = await startPaypalTestServer("disputes-test");
  ({ signer, paypal } = api);
  tenant = await aTenant();
  await anEndpoint(tenant, "paypal", { settings: { webhookId, ...app, apiBaseUrl: api.base } });
});
afterAll(() => api.close());

async function send(event: object) {
  const body = JSON.stringify(event);
  const res = await deliver(webhookRequest(tenant.slug, "paypal", body, paypalHeaders(body, signer, { webhookId })));
  expect(res.status).toBe(200);
}

const paypalId = () =>
  unique("")
    .replace(/[^A-Za-z0-9]/g, "")
    .toUpperCase()
    .slice(-17);

/** A capture PayPal's API knows, delivered by its webhook and posted. */
async function aPostedCapture(amount: number, account = "acct_disputed") {
  const m: SimMovement = {
    tenant: tenant.slug,
    provider: "paypal",
    kind: "PAYMENT",
    reference: paypalId(),
    account,
    amount,
    currency: "USD",
    created,
  };
  paypal.add(app.clientId, app.clientSecret, [m]);
  await send(paypalEvent("PAYMENT.CAPTURE.COMPLETED", "capture", captureResource(m), created));
  await drainAll();
  return m;
}

/** PayPal's fee of a simulated capture (lib/providers/paypal/simulate.ts). */
const paypalFee = (amount: number) => Math.min(amount, Math.round(amount * 0.0349) + 49);

/** A dispute on a capture as PayPal's API shows it now; delivered as `type` when given. */
function aDispute(
  capture: SimMovement,
  id: string,
  movements: PaypalFundMovement[],
  o: { status?: string; outcome?: string; shape?: "fund_movements" } = {},
) {
  const resource = paypalDisputeResource({
    id,
    captureId: capture.reference,
    amount: capture.amount,
    currency: capture.currency,
    created: created + 86_400,
    movements,
    ...o,
  });
  return resource;
}
const disputeEvent = (type: string, resource: object) => paypalEvent(type, "dispute", resource, created + 86_400);

/** A dispute of 1,000 on the capture that the seller lost, known to PayPal's API and delivered resolved. */
async function sendLostDispute(c: SimMovement) {
  const lost = aDispute(
    c,
    `PP-D-${paypalId().slice(0, 8)}`,
    [{ type: "DEBIT", reason: "DISPUTE_SETTLEMENT", amount: 1_000, currency: "USD", at: created + 86_400 }],
    { status: "RESOLVED", outcome: "RESOLVED_BUYER_FAVOUR", shape: "fund_movements" },
  );
  paypal.addResource(app.clientId, app.clientSecret, "disputes", lost);
  await send(disputeEvent("CUSTOMER.DISPUTE.RESOLVED", lost));
}

const postingsOf = (prefix: string) => postingsByPrefix(tenant.id, prefix);

const balance = async (code: string) =>
  (await balancesByCode(tenant.id)).find((b) => b.code === code && b.currency === "USD")?.amount ?? 0n;

describe("PayPal fees, reversals and disputes", () => {
  it("posts a capture's PayPal fee from its seller_receivable_breakdown, as PayPal's API confirms it", async () => {
    const fees = await balance("fees:paypal");
    const c = await aPostedCapture(12_345);
    const fee = paypalFee(12_345);
    expect(await postingsOf(c.reference)).toEqual([
      {
        kind: "PAYMENT",
        reference: c.reference,
        legs: { "clearing:paypal": 12_345n, "customer:acct_disputed": -12_345n },
      },
      {
        kind: "FEE",
        reference: `${c.reference}:fee`,
        legs: { "clearing:paypal": -BigInt(fee), "fees:paypal": BigInt(fee) },
      },
    ]);
    expect(await balance("fees:paypal")).toBe(fees + BigInt(fee));
  });

  it("withdraws a chargeback once, told twice (the reversal, twice, and the dispute's settlement, at once), and gives it back once when the seller wins", async () => {
    const c = await aPostedCapture(5_000);
    const disputes = await balance("disputes:paypal");
    const fees = await balance("fees:paypal");
    const reversal = paypalReversalResource({
      id: paypalId(),
      captureId: c.reference,
      amount: 5_000,
      currency: "USD",
      created: created + 86_400,
    });
    paypal.addResource(app.clientId, app.clientSecret, "refunds", reversal);
    const debit: PaypalFundMovement[] = [
      { type: "DEBIT", reason: "DISPUTE_SETTLEMENT", amount: 5_000, currency: "USD", at: created + 86_400 },
      { type: "DEBIT", reason: "CHARGEBACK_FEE", amount: 2_000, currency: "USD", at: created + 86_400 },
      // The buyer's side of it is not our balance.
      {
        party: "BUYER",
        type: "CREDIT",
        reason: "DISPUTE_SETTLEMENT",
        amount: 5_000,
        currency: "USD",
        at: created + 86_400,
      },
    ];
    const id = `PP-D-${paypalId().slice(0, 8)}`;
    const underReview = aDispute(c, id, debit, { status: "UNDER_REVIEW" });
    paypal.addResource(app.clientId, app.clientSecret, "disputes", underReview);
    const reversed = paypalEvent("PAYMENT.CAPTURE.REVERSED", "refund", reversal, created + 86_400);
    await Promise.all([send(reversed), send(reversed), send(disputeEvent("CUSTOMER.DISPUTE.UPDATED", underReview))]);
    await drainAll();
    expect(await postingsOf(`${c.reference}:`)).toEqual([
      { kind: "FEE", reference: `${c.reference}:fee`, legs: expect.any(Object) },
      {
        kind: "DISPUTE",
        reference: `${c.reference}:reversed`,
        legs: { "clearing:paypal": -5_000n, "disputes:paypal": 5_000n },
      },
    ]);
    expect(await postingsOf(`${id}:`)).toEqual([
      { kind: "FEE", reference: `${id}:chargeback_fee`, legs: { "clearing:paypal": -2_000n, "fees:paypal": 2_000n } },
    ]);
    expect(await balance("disputes:paypal")).toBe(disputes + 5_000n);

    // The seller wins: PayPal gives the money back (and keeps its fee).
    const won = aDispute(
      c,
      id,
      [
        ...debit,
        { type: "CREDIT", reason: "DISPUTE_SETTLEMENT", amount: 5_000, currency: "USD", at: created + 5 * 86_400 },
      ],
      {
        status: "RESOLVED",
        outcome: "RESOLVED_SELLER_FAVOUR",
      },
    );
    paypal.addResource(app.clientId, app.clientSecret, "disputes", won);
    await send(disputeEvent("CUSTOMER.DISPUTE.RESOLVED", won));
    await send(disputeEvent("CUSTOMER.DISPUTE.RESOLVED", won));
    // An older event of the dispute arriving late lists nothing new.
    await send(disputeEvent("CUSTOMER.DISPUTE.UPDATED", underReview));
    await drainAll();
    expect((await postingsOf(`${c.reference}:re`)).map((p) => [p.kind, p.reference])).toEqual([
      ["DISPUTE", `${c.reference}:reversed`],
      ["DISPUTE_REVERSAL", `${c.reference}:reinstated`],
    ]);
    expect(await balance("disputes:paypal")).toBe(disputes);
    // The capture's own fee was posted before `fees` was read: only the chargeback fee is new.
    expect(await balance("fees:paypal")).toBe(fees + 2_000n);
    expect(await ledgerViolations()).toEqual([]);
  });

  it("holds a dispute that would take back a payment already refunded in full: never taken twice", async () => {
    const c = await aPostedCapture(1_000, "acct_refunded");
    const refund: SimMovement = {
      ...c,
      kind: "REFUND",
      reference: paypalId(),
      paymentReference: c.reference,
      created: created + 3_600,
    };
    paypal.add(app.clientId, app.clientSecret, [refund]);
    await send(paypalEvent("PAYMENT.CAPTURE.REFUNDED", "refund", refundResource(refund), created + 3_600));
    await drainAll();
    const disputes = await balance("disputes:paypal");
    await sendLostDispute(c);
    await drainAll();
    const claim = await prisma.processedEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, providerReference: `${c.reference}:reversed` },
    });
    expect(claim.status).toBe("HELD");
    expect(claim.lastError).toContain(`past the payment's 1000`);
    const conflicts = await prisma.claimConflict.findMany({
      where: { tenantId: tenant.id, processedEventId: claim.id },
    });
    expect(conflicts).toHaveLength(1);
    // A dispute, not a refund, was held: the case says so, and lists what was taken back with its kind.
    expect(conflicts[0]!.kind).toBe("OVER_WITHDRAWAL");
    expect(conflicts[0]!.claimed).toMatchObject({
      payment: { reference: c.reference, amount: "1000" },
      withdrawals: [{ reference: refund.reference, kind: "REFUND", amount: "1000", status: "DONE" }],
    });
    expect(conflicts[0]!.claimed).not.toHaveProperty("refunds");
    expect(conflicts[0]!.delivered).toMatchObject({ kind: "DISPUTE", reference: `${c.reference}:reversed` });
    expect(await postingsOf(`${c.reference}:reversed`)).toEqual([]);
    expect(await balance("disputes:paypal")).toBe(disputes);
  });

  it("holds a refund of a payment a lost dispute already took back in full, as an over-refund", async () => {
    const c = await aPostedCapture(1_000, "acct_charged_back");
    await sendLostDispute(c);
    await drainAll();
    expect(await postingsOf(`${c.reference}:reversed`)).toHaveLength(1);
    const refund: SimMovement = {
      ...c,
      kind: "REFUND",
      reference: paypalId(),
      paymentReference: c.reference,
      amount: 400,
      created: created + 2 * 86_400,
    };
    paypal.add(app.clientId, app.clientSecret, [refund]);
    await send(paypalEvent("PAYMENT.CAPTURE.REFUNDED", "refund", refundResource(refund), created + 2 * 86_400));
    await drainAll();
    const claim = await prisma.processedEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, providerReference: refund.reference },
    });
    expect(claim.status).toBe("HELD");
    const conflicts = await prisma.claimConflict.findMany({
      where: { tenantId: tenant.id, processedEventId: claim.id },
    });
    expect(conflicts.map((k) => k.kind)).toEqual(["OVER_REFUND"]);
    const dispute = { reference: `${c.reference}:reversed`, kind: "DISPUTE", amount: "1000", status: "DONE" };
    // `refunds` stays beside `withdrawals` for an over-refund: the evidence's name before disputes were told apart.
    expect(conflicts[0]!.claimed).toMatchObject({ withdrawals: [dispute], refunds: [dispute] });
    expect(await postingsOf(refund.reference)).toEqual([]);
  });

  it("posts nothing of a dispute body PayPal's API does not confirm: a fee given back that PayPal never gave, a settlement of another amount, a dispute PayPal does not know", async () => {
    const c = await aPostedCapture(2_500);
    const id = `PP-D-${paypalId().slice(0, 8)}`;
    const truth = aDispute(c, id, [
      { type: "DEBIT", reason: "DISPUTE_SETTLEMENT", amount: 2_500, currency: "USD", at: created + 86_400 },
    ]);
    paypal.addResource(app.clientId, app.clientSecret, "disputes", truth);
    // Forged (PayPal signs only a CRC-32 of the body): a 500.00 fee "returned", and the settlement at 25.00 → 2.50.
    const forged = aDispute(c, id, [
      { type: "DEBIT", reason: "DISPUTE_SETTLEMENT", amount: 250, currency: "USD", at: created + 86_400 },
      { type: "CREDIT", reason: "DISPUTE_FEE", amount: 50_000, currency: "USD", at: created + 86_400 },
    ]);
    const unknown = aDispute(c, "PP-D-NOSUCH1", [
      { type: "CREDIT", reason: "DISPUTE_FEE", amount: 700, currency: "USD", at: created + 86_400 },
    ]);
    await send(disputeEvent("CUSTOMER.DISPUTE.UPDATED", forged));
    await send(disputeEvent("CUSTOMER.DISPUTE.UPDATED", unknown));
    await drainAll();
    const claims = await prisma.processedEvent.findMany({
      where: {
        tenantId: tenant.id,
        providerReference: {
          in: [`${c.reference}:reversed`, `${id}:dispute_fee:returned`, "PP-D-NOSUCH1:dispute_fee:returned"],
        },
      },
      orderBy: { providerReference: "asc" },
    });
    expect(claims.map((x) => [x.providerReference, x.status]).sort()).toEqual(
      [
        [`${c.reference}:reversed`, "FAILED"],
        ["PP-D-NOSUCH1:dispute_fee:returned", "FAILED"],
        [`${id}:dispute_fee:returned`, "FAILED"],
      ].sort(),
    );
    const error = (ref: string) => claims.find((x) => x.providerReference === ref)!.lastError;
    expect(error(`${c.reference}:reversed`)).toContain("amount 2500, webhook 250");
    expect(error(`${id}:dispute_fee:returned`)).toContain(`has no FEE ${id}:dispute_fee:returned`);
    expect(error("PP-D-NOSUCH1:dispute_fee:returned")).toContain("PayPal has no dispute PP-D-NOSUCH1 (HTTP 404)");
    expect(await postingsOf(`${c.reference}:reversed`)).toEqual([]);
    expect(await postingsOf(`${id}:`)).toEqual([]);
    expect(await postingsOf("PP-D-NOSUCH1")).toEqual([]);
  });
});
