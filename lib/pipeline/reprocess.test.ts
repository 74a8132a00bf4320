import { describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { pickUpReceived } from "@/lib/pipeline/claim";
import { prisma } from "@/lib/platform/db";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { reprocessEvent, reprocessFailed } from "@/lib/pipeline/reprocess";
import { aStripePayment, aTenant, stripeRequest } from "@/dev/testing/builders";
import { fileTenant } from "@/dev/testing/file-tenant";
import { drain } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";

const tenant = fileTenant();
const latest = () => prisma.rawEvent.findFirstOrThrow({ where: { tenantId: tenant.id }, orderBy: { id: "desc" } });

describe("reprocessing", () => {
  it("parses a FAILED event again and audits who asked and why", async () => {
    await deliver(stripeRequest(tenant, "{broken"));
    await drain();
    const failed = await latest();
    expect(failed.status).toBe("FAILED");
    const r = await reprocessEvent(tenant.id, failed.id, SYSTEM_ACTOR, "parser fixed", 300_000);
    expect(r).toEqual({ ok: true, value: { rawEventId: failed.id, action: "reparse", claims: 0 } });
    expect((await latest()).status).toBe("RECEIVED");
    await drain();
    expect((await latest()).status).toBe("FAILED"); // still broken bytes: fails again, visibly
    expect(
      await prisma.auditLog.findFirst({ where: { action: "event.reprocess", subjectId: String(failed.id) } }),
    ).toMatchObject({ reason: "parser fixed", actorLabel: "tally" });
  });

  it("releases a stuck claim, which then completes exactly once", async () => {
    const payment = aStripePayment({ amount: 900n, account: "acct_stuck_ui" });
    await deliver(stripeRequest(tenant, payment));
    await pickUpReceived(100); // claimed, then this "worker" vanishes
    const raw = await latest();
    expect(await reprocessEvent(tenant.id, raw.id, SYSTEM_ACTOR, "stuck", 300_000)).toMatchObject({
      ok: false,
      reason: "in_flight",
    });
    const r = await reprocessEvent(tenant.id, raw.id, SYSTEM_ACTOR, "stuck", 0);
    expect(r).toMatchObject({ ok: true, value: { action: "release-claims", claims: 1 } });
    await drain();
    await drain();
    expect(await prisma.posting.count({ where: { providerReference: payment.data.object.id } })).toBe(1);
    expect((await latest()).status).toBe("DONE");
    expect(await reprocessEvent(tenant.id, raw.id, SYSTEM_ACTOR, "again", 0)).toMatchObject({
      ok: false,
      reason: "nothing_to_do",
      message: expect.stringContaining("is DONE"),
    });
    expect(await ledgerViolations()).toEqual([]);
  });

  it("refuses events of another tenant", async () => {
    const other = await aTenant();
    await deliver(stripeRequest(other, "{broken"));
    await drain();
    const theirs = await prisma.rawEvent.findFirstOrThrow({ where: { tenantId: other.id } });
    expect(await reprocessEvent(tenant.id, theirs.id, SYSTEM_ACTOR, "x", 0)).toMatchObject({
      ok: false,
      reason: "not_found",
    });
  });

  it("requeues all FAILED events of a tenant", async () => {
    await deliver(stripeRequest(tenant, "{also broken"));
    await drain();
    const { requeued } = await reprocessFailed(tenant.id, SYSTEM_ACTOR, "bulk", 0);
    expect(requeued.length).toBeGreaterThanOrEqual(2);
    expect(await prisma.rawEvent.count({ where: { tenantId: tenant.id, status: "FAILED" } })).toBe(0);
  });
});
