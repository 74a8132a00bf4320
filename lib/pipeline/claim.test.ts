// The claim: a retry with the same money is a DUPLICATE, one with other money a
// CONFLICT (recorded once, a case, never posted); money that is not money fails once
// at parse time; every delivery of a reference can be found.
import { afterEach, describe, expect, it } from "vitest";
import { pickUpReceived } from "@/lib/pipeline/claim";
import { prisma } from "@/lib/platform/db";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { listStuck } from "@/lib/views/stuck-claims";
import { listEvents } from "@/lib/views/events";
import { getCase } from "@/lib/cases/cases";
import { aStripePayment, aStripeRefund, stripeRequest } from "@/dev/testing/builders";
import { fileTenant } from "@/dev/testing/file-tenant";
import { drain, drainAll } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";
import { balanceOf as ledgerBalance } from "@/lib/ledger/accounts";

const tenant = fileTenant();
afterEach(async () => {
  expect(await ledgerViolations()).toEqual([]);
});

async function send(event: object | string): Promise<void> {
  expect((await deliver(stripeRequest(tenant, event))).status).toBe(200);
}
const rawsOf = (reference: string) =>
  prisma.rawEvent.findMany({
    where: { tenantId: tenant.id, movementReferences: { has: reference } },
    orderBy: { id: "asc" },
  });
const balanceOf = (account: string, currency = "USD") => ledgerBalance(tenant.id, `customer:${account}`, currency);

describe("a retry whose money differs", () => {
  it("is a CONFLICT holding both values, never posted, a case with both raw bodies; a reformatted equal retry stays a DUPLICATE", async () => {
    const payment = aStripePayment({ amount: 100n, account: "acct_conflict" });
    const pi = payment.data.object;
    await send(payment);
    await drain();
    // Semantically equal: another event id, field order reversed, number as string, pretty-printed, later timestamp.
    const equal = JSON.stringify(
      {
        ...payment,
        id: "evt_other",
        created: payment.created + 60,
        data: { object: Object.fromEntries(Object.entries({ ...pi, amount_received: "100" }).reverse()) },
      },
      null,
      2,
    );
    await send(equal);
    // Hostile retries: each field of the canonical movement changed once.
    for (const changed of [{ amount_received: 120 }, { currency: "eur" }, { metadata: { account: "acct_thief" } }])
      await send({ ...payment, id: `evt_${Object.keys(changed)[0]}`, data: { object: { ...pi, ...changed } } });
    await drainAll();

    const raws = await rawsOf(pi.id);
    expect(raws.map((r) => r.status)).toEqual(["DONE", "DUPLICATE", "CONFLICT", "CONFLICT", "CONFLICT"]);
    expect(await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: pi.id } })).toBe(1);
    expect(await balanceOf("acct_conflict")).toBe(-100n);
    expect(await balanceOf("acct_thief")).toBe(0n);
    const conflicts = await prisma.claimConflict.findMany({
      where: { tenantId: tenant.id, reference: pi.id },
      orderBy: { id: "asc" },
      include: { case: true },
    });
    expect(conflicts.map((c) => [c.claimed, c.delivered])).toEqual([
      [
        { kind: "PAYMENT", account: "acct_conflict", amount: "100", currency: "USD" },
        { kind: "PAYMENT", account: "acct_conflict", amount: "120", currency: "USD" },
      ],
      [
        { kind: "PAYMENT", account: "acct_conflict", amount: "100", currency: "USD" },
        { kind: "PAYMENT", account: "acct_conflict", amount: "100", currency: "EUR" },
      ],
      [
        { kind: "PAYMENT", account: "acct_conflict", amount: "100", currency: "USD" },
        { kind: "PAYMENT", account: "acct_thief", amount: "100", currency: "USD" },
      ],
    ]);
    expect(conflicts.every((c) => c.case?.kind === "CONFLICT" && c.case.status === "OPEN")).toBe(true);
    expect(raws[2]!.lastError).toContain("amount 100 → 120");
    // The case shows both raw bodies side by side: the claimed delivery and the conflicting one.
    const detail = await getCase(tenant.id, conflicts[0]!.case!.id);
    expect(detail!.conflict!.raws.map((r) => [r.id, r.conflicting])).toEqual([
      [raws[0]!.id, false],
      [raws[2]!.id, true],
    ]);
    expect(detail!.conflict!.raws[1]!.body).toContain('"amount_received":120');
    // Listed in stuck claims, one row per conflict.
    expect(
      (await listStuck(tenant.id, 60_000)).filter((s) => s.kind === "conflict" && s.reference === pi.id),
    ).toHaveLength(3);
  });

  it("the same conflicting body delivered again (and concurrently) is recorded once", async () => {
    const payment = aStripePayment({ amount: 500n, account: "acct_twice" });
    await send(payment);
    await drain();
    const bad = { ...payment, id: "evt_bad", data: { object: { ...payment.data.object, amount_received: 5000 } } };
    await Promise.all(Array.from({ length: 4 }, () => send(bad)));
    await Promise.all(Array.from({ length: 4 }, () => pickUpReceived(1)));
    await send(bad);
    await drain();
    expect((await rawsOf(payment.data.object.id)).map((r) => r.status)).toEqual([
      "DONE",
      "CONFLICT",
      "CONFLICT",
      "CONFLICT",
      "CONFLICT",
      "CONFLICT",
    ]);
    expect(
      await prisma.claimConflict.count({ where: { tenantId: tenant.id, reference: payment.data.object.id } }),
    ).toBe(1);
    expect(
      await prisma.case.count({ where: { tenantId: tenant.id, conflict: { reference: payment.data.object.id } } }),
    ).toBe(1);
  });

  it("a refund whose id equals a payment's reference is a conflict, not a silent duplicate", async () => {
    const payment = aStripePayment({ amount: 800n, account: "acct_same_id" });
    await send(payment);
    await drain();
    await send(
      aStripeRefund({
        reference: payment.data.object.id,
        payment: "pi_elsewhere",
        amount: 800,
        account: "acct_same_id",
      }),
    );
    await drain();
    expect((await rawsOf(payment.data.object.id)).map((r) => r.status)).toEqual(["DONE", "CONFLICT"]);
    expect(
      await prisma.claimConflict.findFirstOrThrow({
        where: { tenantId: tenant.id, reference: payment.data.object.id },
      }),
    ).toMatchObject({ kind: "DIFFERENT_RETRY", delivered: { kind: "REFUND" } });
    expect(await balanceOf("acct_same_id")).toBe(-800n);
  });
});

describe("money that is not money", () => {
  it("an amount of 2^63 fails once, at parse time, naming the field, listed as stuck, never retried", async () => {
    const payment = aStripePayment({ account: "acct_huge" });
    const body = JSON.stringify(payment).replace('"amount_received":1250', '"amount_received":"9223372036854775808"');
    await send(body);
    await drain();
    const raw = await prisma.rawEvent.findFirstOrThrow({ where: { tenantId: tenant.id }, orderBy: { id: "desc" } });
    expect(raw).toMatchObject({
      status: "FAILED",
      attempts: 1,
      lastError: expect.stringContaining("amount_received: amount 9223372036854775808 is beyond"),
    });
    expect(
      await prisma.processedEvent.count({ where: { tenantId: tenant.id, providerReference: payment.data.object.id } }),
    ).toBe(0);
    await drainAll();
    expect((await prisma.rawEvent.findUniqueOrThrow({ where: { id: raw.id } })).attempts).toBe(1);
    expect(await listStuck(tenant.id, 60_000)).toContainEqual(
      expect.objectContaining({ kind: "failed_event", rawEventId: raw.id }),
    );
  });
});

describe("every delivery of a reference", () => {
  it("events by reference finds the winner, its duplicates and its conflicts", async () => {
    const payment = aStripePayment({ amount: 900n, account: "acct_find" });
    await send(payment);
    await send({ ...payment, id: "evt_dup" });
    await send({ ...payment, id: "evt_conflict", data: { object: { ...payment.data.object, amount_received: 901 } } });
    await drain();
    const found = await listEvents({ tenantId: tenant.id, reference: payment.data.object.id });
    expect(found.map((e) => e.status).sort()).toEqual(["CONFLICT", "DONE", "DUPLICATE"]);
  });
});
