// Why a settled movement was never posted, from the rows Tally stored: real
// deliveries through the webhook route, the real worker, a real reconciliation
// against a settlement file; only the calendar is moved (a secret's dates), never the
// product's own decisions.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { addSecret, generateSecret, revokeSecret } from "@/lib/admin/tenants";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { pickUpReceived } from "@/lib/pipeline/claim";
import { pool, prisma } from "@/lib/platform/db";
import { refineCauses } from "@/lib/recon/causes";
import { aStripePayment, aStripeRefund, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { reconcileStripeFile } from "@/dev/testing/recon-file";
import { deliver } from "@/dev/testing/route";

const DAY = 86_400_000;
const dir = mkdtempSync(path.join(os.tmpdir(), "tally-causes-"));
const today = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()));
const yesterday = new Date(today.getTime() - DAY);
const noon = (day: Date) => new Date(day.getTime() + DAY / 2).toISOString();

/** A Tally-format settlement file of Stripe lines: [reference, kind, major amount, occurred at]. */
function settlement(name: string, lines: [string, "payment" | "refund", string, string][]) {
  const file = path.join(dir, `${name}.csv`);
  writeFileSync(
    file,
    `${["reference,kind,amount,currency,occurred_at", ...lines.map((l) => `${l[0]},${l[1]},${l[2]},USD,${l[3]}`)].join("\n")}\n`,
  );
  return file;
}

async function send(tenant: TestTenant, event: object, secret = tenant.stripeSecret) {
  expect((await deliver(stripeRequest(tenant, event, { secret }))).status).toBe(200);
}

async function causes(tenantId: string) {
  const rows = await prisma.reconDiscrepancy.findMany({
    where: { tenantId, bucket: "THEIRS_NOT_OURS" },
    select: { reference: true, cause: true },
  });
  return Object.fromEntries(rows.map((r) => [r.reference, r.cause]));
}

async function reconcile(tenant: TestTenant, day: Date, file: string) {
  const r = await reconcileStripeFile(tenant.id, { from: day, to: new Date(day.getTime() + DAY) }, file);
  if (!r.ok) throw new Error(r.message);
  return r.value;
}

describe("the cause of a theirs-not-ours", () => {
  it("is read from what Tally stored: a conflict, a delivery that failed to parse, a delivery after the day, or nothing", async () => {
    const tenant = await aTenant();
    const other = await aTenant();
    // A payment posted, then a refund of more than it: held, recorded as an over-refund conflict.
    const paid = aStripePayment({ amount: 1000n, account: "acct_causes" });
    const overRefund = aStripeRefund({ payment: paid.data.object.id, amount: 1500, account: "acct_causes" });
    await send(tenant, paid);
    await drainAll();
    await send(tenant, overRefund);
    await drainAll();
    expect(await prisma.claimConflict.count({ where: { tenantId: tenant.id, kind: "OVER_REFUND" } })).toBe(1);

    // A delivery whose body does not parse (a currency that is not ISO 4217), and one claimed
    // but not posted yet (its worker is still on it): both picked up, neither committed.
    const unreadable = aStripePayment({ currency: "zzz" });
    const claimedLate = aStripePayment();
    await send(tenant, unreadable);
    await send(tenant, claimedLate);
    // Unreadable copies of the held refund and of the claimed payment: what the claims say comes first.
    await send(tenant, {
      ...overRefund,
      id: "evt_broken_refund",
      data: { object: { ...overRefund.data.object, currency: "zzz" } },
    });
    await send(tenant, aStripePayment({ reference: claimedLate.data.object.id, currency: "zzz" }));
    // Another tenant's unreadable delivery names this tenant's never-delivered payment: not evidence here.
    const never = "pi_causes_never_delivered";
    await send(other, aStripePayment({ reference: never, currency: "zzz" }));
    const picked = await pickUpReceived(100);
    expect(picked).toMatchObject({ failed: 4, claims: [{ reference: claimedLate.data.object.id }] });
    // One that arrived and waits in the queue, not parsed yet.
    const queuedLate = aStripePayment();
    await send(tenant, queuedLate);

    // The provider settled all of them yesterday: every delivery above came after that day.
    const file = settlement("stored", [
      [paid.data.object.id, "payment", "10.00", noon(yesterday)],
      [overRefund.data.object.id, "refund", "15.00", noon(yesterday)],
      [unreadable.data.object.id, "payment", "12.50", noon(yesterday)],
      [claimedLate.data.object.id, "payment", "12.50", noon(yesterday)],
      [queuedLate.data.object.id, "payment", "12.50", noon(yesterday)],
      [never, "payment", "12.50", noon(yesterday)],
    ]);
    expect(await reconcile(tenant, yesterday, file)).toMatchObject({ matched: 1, theirsNotOurs: 5 });
    expect(await causes(tenant.id)).toEqual({
      // The held refund also arrived after the day, and a copy of it failed to parse: the conflict
      // is what a person must decide.
      [overRefund.data.object.id]: "CONFLICT",
      // Also after the day, but it can never post until its body is read.
      [unreadable.data.object.id]: "PARSE_FAILED",
      [claimedLate.data.object.id]: "LATE", // its unreadable copy is not why it is not posted

      [queuedLate.data.object.id]: "LATE",
      [never]: "NEVER_DELIVERED",
    });

    // The endpoint was set up today (its first secret): a setup is not a rotation, nothing was refused.
    await reconcile(tenant, today, settlement("today", [["pi_settled_on_setup_day", "payment", "12.50", noon(today)]]));
    expect(await causes(tenant.id)).toMatchObject({ pi_settled_on_setup_day: "NEVER_DELIVERED" });
  });

  it("is a refused signature when nothing was delivered on a day the endpoint's secrets changed, or had none accepted", async () => {
    const tenant = await aTenant();
    const endpoint = await prisma.providerEndpoint.findUniqueOrThrow({
      where: { tenantId_provider: { tenantId: tenant.id, provider: "stripe" } },
      include: { secrets: true },
    });
    const [first] = endpoint.secrets;
    // Set up two days ago; today the tenant rotated (the provider kept signing with the old secret).
    await prisma.endpointSecret.update({
      where: { id: first!.id },
      data: { createdAt: new Date(yesterday.getTime() - DAY) },
    });
    const rotated = generateSecret("stripe");
    expect((await addSecret(tenant.slug, "stripe", rotated, { overlapSeconds: 0 }, SYSTEM_ACTOR)).ok).toBe(true);
    // One payment of today did arrive, signed with the new secret (claimed, not posted yet): not a refusal.
    const arrived = aStripePayment();
    await send(tenant, arrived, rotated);
    await pickUpReceived(100);
    const file = settlement("rotation", [
      ["pi_refused_today", "payment", "12.50", noon(today)],
      [arrived.data.object.id, "payment", "12.50", noon(today)],
    ]);
    await reconcile(tenant, today, file);
    const yesterdays = settlement("before-rotation", [["pi_missing_yesterday", "payment", "12.50", noon(yesterday)]]);
    await reconcile(tenant, yesterday, yesterdays);
    expect(await causes(tenant.id)).toEqual({
      pi_refused_today: "SIGNATURE_REFUSED",
      [arrived.data.object.id]: "NEVER_DELIVERED",
      // Yesterday the one secret was accepted all day: nothing makes a refusal likely.
      pi_missing_yesterday: "NEVER_DELIVERED",
    });

    // An endpoint left with no accepted secret refuses every signature, days after the revocation too.
    const bare = await aTenant();
    const secrets = await prisma.endpointSecret.findMany({
      where: { endpoint: { tenantId: bare.id, provider: "stripe" } },
    });
    for (const s of secrets) expect((await revokeSecret(s.id, "leaked", SYSTEM_ACTOR)).ok).toBe(true);
    await prisma.endpointSecret.updateMany({
      where: { id: { in: secrets.map((s) => s.id) } },
      data: { createdAt: new Date(yesterday.getTime() - 2 * DAY), revokedAt: new Date(yesterday.getTime() - DAY) },
    });
    await reconcile(bare, yesterday, settlement("bare", [["pi_no_secret", "payment", "12.50", noon(yesterday)]]));
    expect(await causes(bare.id)).toEqual({ pi_no_secret: "SIGNATURE_REFUSED" });
  });

  it("is a refused signature when a refused delivery named it, with the endpoint's secrets unchanged for days", async () => {
    const tenant = await aTenant();
    const other = await aTenant();
    for (const t of [tenant, other])
      await prisma.endpointSecret.updateMany({
        where: { endpoint: { tenantId: t.id, provider: "stripe" } },
        data: { createdAt: new Date(yesterday.getTime() - 5 * DAY) },
      });
    // Signed with a secret the endpoint does not hold (the sender's, after a rotation only it made): refused.
    const refused = aStripePayment({ reference: "pi_sent_unsigned01" });
    const res = await deliver(stripeRequest(tenant, refused, { secret: "whsec_the_senders_own" }));
    expect(res.status).toBe(401);
    // Another tenant's refused delivery names a reference this tenant's settlement has: not this tenant's evidence.
    expect(
      (await deliver(stripeRequest(other, aStripePayment({ reference: "pi_other_tenants01" }), { secret: "whsec_x" })))
        .status,
    ).toBe(401);
    await reconcile(
      tenant,
      today,
      settlement("refused-kept", [
        ["pi_sent_unsigned01", "payment", "12.50", noon(today)],
        ["pi_other_tenants01", "payment", "12.50", noon(today)],
        ["pi_never_sent01", "payment", "12.50", noon(today)],
      ]),
    );
    expect(await causes(tenant.id)).toEqual({
      pi_sent_unsigned01: "SIGNATURE_REFUSED",
      pi_other_tenants01: "NEVER_DELIVERED",
      pi_never_sent01: "NEVER_DELIVERED",
    });
  });

  it("keeps a cause once found, and never touches causes other steps decided", async () => {
    const tenant = await aTenant();
    await send(tenant, aStripePayment({ reference: "pi_fee_line", currency: "zzz" }));
    await pickUpReceived(100);
    const run = await prisma.reconRun.create({
      data: {
        tenantId: tenant.id,
        provider: "stripe",
        windowFrom: yesterday,
        windowTo: today,
        source: "CSV",
        actorType: "SYSTEM",
        actorLabel: "test",
      },
    });
    const row = (reference: string, cause: "FEE" | "LATE" | "NEVER_DELIVERED") => ({
      tenantId: tenant.id,
      provider: "stripe" as const,
      reference,
      bucket: "THEIRS_NOT_OURS" as const,
      cause,
      day: yesterday,
      theirAmount: 100n,
      theirCurrency: "USD",
      firstRunId: run.id,
      lastRunId: run.id,
    });
    await prisma.reconDiscrepancy.createMany({
      data: [row("pi_fee_line", "FEE"), row("pi_was_late", "LATE"), row("pi_plain", "NEVER_DELIVERED")],
    });
    const ids = (await prisma.reconDiscrepancy.findMany({ where: { tenantId: tenant.id } })).map((d) => d.id);
    const client = await pool().connect();
    try {
      await client.query("BEGIN");
      expect(await refineCauses(client, tenant.id, "stripe", ids)).toEqual({});
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    expect(await causes(tenant.id)).toEqual({
      pi_fee_line: "FEE", // a failed delivery names it, but its cause was decided by the fee step
      pi_was_late: "LATE", // its evidence is gone (no delivery stored): what was found stays
      pi_plain: "NEVER_DELIVERED",
    });
  });
});
