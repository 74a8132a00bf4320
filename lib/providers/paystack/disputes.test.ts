// Paystack's fees and disputes through the signed webhook route and the worker: what
// each posts, to which accounts, and that retries and reordering never post twice.
import { beforeAll, describe, expect, it } from "vitest";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { prisma } from "@/lib/platform/db";
import { paystackDispute, paystackDisputeEvents, type SimDispute } from "@/lib/providers/paystack/simulate";
import { aTenant, type TestTenant, unique, webhookRequest } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { aPaystackCharge, aPaystackRefund, anEndpoint, paystackSignature } from "@/dev/testing/provider-builders";
import { postingsByPrefix } from "@/dev/testing/postings";
import { deliver } from "@/dev/testing/route";

let tenant: TestTenant;
let secret: string;
beforeAll(async () => {
  tenant = await aTenant();
  secret = await anEndpoint(tenant, "paystack");
});

async function send(event: object) {
  const body = JSON.stringify(event);
  const res = await deliver(
    webhookRequest(tenant.slug, "paystack", body, { "x-paystack-signature": paystackSignature(body, secret) }),
  );
  expect(res.status).toBe(200);
}

const postings = (prefix: string) => postingsByPrefix(tenant.id, prefix);

const aCharge = (reference: string, amount: number, fees: unknown) => {
  const c = aPaystackCharge({ reference, amount, account: "acct_ada" });
  return { ...c, data: { ...c.data, fees } };
};

function aDispute(reference: string, o: Partial<SimDispute>): SimDispute {
  const created = Math.floor(Date.now() / 1000) - 7200;
  return {
    id: Number(String(Date.now()).slice(-6)) + Math.floor(Math.random() * 1000),
    payment: {
      tenant: tenant.slug,
      provider: "paystack",
      kind: "PAYMENT",
      reference,
      account: "acct_ada",
      amount: 40_000,
      currency: "NGN",
      created,
    },
    refundAmount: 40_000,
    outcome: "lost",
    created: created + 60,
    resolved: created + 3600,
    ...o,
  };
}

describe("Paystack fees from charge.success", () => {
  it("a charge with its fee posts the payment to the customer and the fee to fees:paystack; a retry whose fee changed posts nothing more", async () => {
    const reference = unique("T");
    await send(aCharge(reference, 10_000, 150));
    await send(aCharge(reference, 10_000, 150));
    await drainAll();
    expect(await postings(reference)).toEqual([
      {
        kind: "PAYMENT",
        reference,
        legs: { "clearing:paystack": 10_000n, "customer:acct_ada": -10_000n },
      },
      {
        kind: "FEE",
        reference: `${reference}:fee`,
        legs: { "clearing:paystack": -150n, "fees:paystack": 150n },
      },
    ]);
    // Same charge, other fee: the fee's key is claimed, so this is a conflict for a person, not a second fee.
    await send(aCharge(reference, 10_000, 175));
    await drainAll();
    expect(await postings(`${reference}:fee`)).toHaveLength(1);
    const conflict = await prisma.rawEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, provider: "paystack" },
      orderBy: { id: "desc" },
    });
    expect(conflict.status).toBe("CONFLICT");
    expect(await ledgerViolations()).toEqual([]);
  });

  it("a charge whose fee is larger than its amount fails, naming the field, and posts nothing", async () => {
    const reference = unique("T");
    await send(aCharge(reference, 1_000, 1_001));
    await drainAll();
    expect(await postings(reference)).toEqual([]);
    const failed = await prisma.rawEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, provider: "paystack" },
      orderBy: { id: "desc" },
    });
    expect(failed).toMatchObject({
      status: "FAILED",
      lastError: expect.stringContaining("charge.success: fees: 1001"),
    });
  });
});

describe("Paystack disputes from their webhooks", () => {
  it("a lost dispute withdraws its refund_amount once, though its resolution comes twice and before it was opened, and its refund adds nothing", async () => {
    const reference = unique("T");
    await send(aCharge(reference, 40_000, null));
    const d = aDispute(reference, { refundAmount: 25_000 });
    const [create, remind, resolved] = paystackDisputeEvents(d);
    // Out of order and repeated, as retries arrive.
    await send(resolved!);
    await send(remind!);
    await send(resolved!);
    await send(create!);
    // The refund by which Paystack carries the dispute out.
    const refund = aPaystackRefund({ id: 4_000_000 + d.id, transactionReference: reference, amount: 25_000 });
    await send({ ...refund, data: { ...refund.data, dispute: d.id } });
    await drainAll();
    expect(await postings(`dsp_${d.id}`)).toEqual([
      {
        kind: "DISPUTE",
        reference: `dsp_${d.id}`,
        legs: { "clearing:paystack": -25_000n, "disputes:paystack": 25_000n },
      },
    ]);
    expect(await postings(String(4_000_000 + d.id))).toEqual([]);
    expect(await ledgerViolations()).toEqual([]);
  });

  it("a won dispute moves nothing", async () => {
    const reference = unique("T");
    await send(aCharge(reference, 40_000, null));
    const d = aDispute(reference, { outcome: "won" });
    for (const e of paystackDisputeEvents(d)) await send(e);
    await send({ event: "charge.dispute.resolve", data: paystackDispute(d, "resolved") });
    await drainAll();
    expect(await postings(`dsp_${d.id}`)).toEqual([]);
    const last = await prisma.rawEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, provider: "paystack" },
      orderBy: { id: "desc" },
    });
    expect(last.status).toBe("IGNORED");
  });
});
