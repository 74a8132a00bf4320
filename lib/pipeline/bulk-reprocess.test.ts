// Bulk reprocessing against the real claim protocol: claims that gave up are
// released in bulk and each payment is still posted once, even with two people
// asking at once and the provider resending meanwhile; the preview is what is
// sent back; progress is read from the events; a cancel returns what no worker
// has taken and leaves alone what a worker holds; every request is audited.
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { GET as jobsRoute, POST as startRoute } from "@/app/api/v1/tenants/[tenant]/events/bulk-reprocess/route";
import { GET as previewRoute } from "@/app/api/v1/tenants/[tenant]/events/bulk-reprocess/preview/route";
import { aStripePayment, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { drain } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";
import { type Actor, SYSTEM_ACTOR } from "@/lib/admin/audit";
import { createApiToken } from "@/lib/auth/api-tokens";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { pickUpReceived } from "@/lib/pipeline/claim";
import { bulkJobs, cancelBulkReprocess, previewBulkReprocess, startBulkReprocess } from "@/lib/pipeline/bulk-reprocess";
import { Prisma, prisma } from "@/lib/platform/db";

const ops: Actor = { type: "USER", id: "00000000-0000-4000-8000-0000000000ab", label: "ops@example.test" };

async function send(t: TestTenant, body: object | string) {
  expect((await deliver(stripeRequest(t, body))).status).toBe(200);
}

/** Payments whose claims a worker took and then gave up on (as after TALLY_MAX_ATTEMPTS failures). */
async function gaveUp(t: TestTenant, references: string[]) {
  for (const reference of references) await send(t, aStripePayment({ reference, amount: 700n, account: "acct_bulk" }));
  while ((await pickUpReceived(100)).picked > 0);
  await prisma.$executeRaw(Prisma.sql`
    UPDATE processed_events SET status = 'FAILED', claimed_at = NULL, last_error = 'gave up: ledger unavailable'
    WHERE tenant_id = ${t.id}::uuid AND provider_reference = ANY(${references}::text[])`);
  await prisma.$executeRaw(Prisma.sql`
    UPDATE raw_events SET status = 'FAILED', last_error = 'gave up: ledger unavailable'
    WHERE id IN (SELECT raw_event_id FROM processed_events WHERE tenant_id = ${t.id}::uuid AND provider_reference = ANY(${references}::text[]))`);
}

let tenant: TestTenant;
beforeAll(async () => {
  tenant = await aTenant();
});

describe("bulk reprocessing", () => {
  it("releases claims that gave up, in bulk, and each payment is posted once though two people ask at once", async () => {
    const refs = Array.from({ length: 30 }, (_, i) => `pi_bulk_${i}`);
    await gaveUp(tenant, refs);
    for (let i = 0; i < 5; i++) await send(tenant, `{broken ${i}`);
    await drain();

    expect(await previewBulkReprocess(tenant.id, { status: "FAILED" })).toBe(35);
    expect(await previewBulkReprocess(tenant.id, { status: "FAILED", reference: "pi_bulk_" })).toBe(30);
    // A literal prefix: _ is not a wildcard.
    expect(await previewBulkReprocess(tenant.id, { status: "FAILED", reference: "pi%" })).toBe(0);

    const filter = { status: "FAILED" as const, reference: "pi_bulk_" };
    const results = await Promise.all(
      [1, 2].map((i) => startBulkReprocess(tenant.id, { filter, expected: 30, reason: `ledger back (${i})` }, ops)),
    );
    const ok = results.filter((r) => r.ok);
    expect(ok).toHaveLength(1);
    expect(ok[0]).toMatchObject({ ok: true, value: { requeued: 30, released: 30, reparse: 0 } });
    expect(results.find((r) => !r.ok)).toMatchObject({ ok: false, reason: "preview_changed" });

    // The provider resends some of them meanwhile; a worker drains it all.
    for (const reference of refs.slice(0, 10))
      await send(tenant, aStripePayment({ reference, amount: 700n, account: "acct_bulk" }));
    await drain();
    await drain();
    const postings = await prisma.posting.groupBy({
      by: ["providerReference"],
      where: { tenantId: tenant.id, providerReference: { in: refs } },
      _count: true,
    });
    expect(postings).toHaveLength(30);
    expect(postings.every((p) => p._count === 1)).toBe(true);
    expect(await ledgerViolations()).toEqual([]);

    const [job] = await bulkJobs(tenant.id);
    expect(job).toMatchObject({ requested: 30, pending: 0, finished: 30, failed: 0, state: "DONE" });
    const audit = await prisma.auditLog.findMany({ where: { tenantId: tenant.id, action: "event.bulk_reprocess" } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorLabel: "ops@example.test", details: { count: 30, released: 30 } });
  });

  it("a cancel returns what no worker took, leaves what a worker holds, and the job says so", async () => {
    const t = await aTenant();
    for (let i = 0; i < 20; i++) await send(t, `{still broken ${i}`);
    await drain();
    const failedBefore = await prisma.rawEvent.findMany({ where: { tenantId: t.id, status: "FAILED" } });
    expect(failedBefore).toHaveLength(20);
    const started = await startBulkReprocess(
      t.id,
      { filter: { status: "FAILED" }, expected: 20, reason: "retry" },
      ops,
    );
    if (!started.ok) throw new Error(started.message);
    expect(await prisma.rawEvent.count({ where: { tenantId: t.id, status: "RECEIVED" } })).toBe(20);

    // A worker has picked up five (their queue rows locked, as the pick-up locks them) while the cancel runs.
    const worker = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await worker.connect();
    await worker.query("BEGIN");
    const held = await worker.query<{ raw_event_id: string }>(
      `SELECT q.raw_event_id FROM raw_event_queue q JOIN raw_events r ON r.id = q.raw_event_id
       WHERE r.tenant_id = $1 ORDER BY q.raw_event_id LIMIT 5 FOR UPDATE OF q`,
      [t.id],
    );
    expect(held.rows).toHaveLength(5);
    const cancelled = await cancelBulkReprocess(t.id, started.value.jobId, ops, "wrong filter");
    await worker.query("COMMIT");
    await worker.end();
    expect(cancelled).toEqual({ ok: true, value: { jobId: started.value.jobId, returned: 15 } });

    const now = await prisma.rawEvent.findMany({ where: { tenantId: t.id }, orderBy: { id: "asc" } });
    const heldIds = new Set(held.rows.map((r) => r.raw_event_id));
    for (const e of now) {
      if (heldIds.has(String(e.id))) expect(e.status).toBe("RECEIVED");
      else {
        // Back where it was, with the error it had, and off the queue.
        expect(e.status).toBe("FAILED");
        expect(e.lastError).toBe(failedBefore.find((f) => f.id === e.id)!.lastError);
      }
    }
    expect(await prisma.rawEventQueue.count({ where: { rawEvent: { tenantId: t.id } } })).toBe(5);
    await drain();
    const [job] = await bulkJobs(t.id, { jobId: started.value.jobId });
    expect(job).toMatchObject({ state: "CANCELLED", requested: 20, returned: 15, pending: 0, failed: 5 });
    expect(await cancelBulkReprocess(t.id, started.value.jobId, ops, "again")).toMatchObject({
      ok: false,
      reason: "not_open",
    });
    expect(await prisma.auditLog.count({ where: { tenantId: t.id, action: "event.bulk_reprocess_cancel" } })).toBe(1);
    // Another tenant cannot see or cancel it.
    const other = await aTenant();
    expect(await cancelBulkReprocess(other.id, started.value.jobId, ops, "not mine")).toMatchObject({
      ok: false,
      reason: "not_found",
    });
  });

  it("through the API: ops only, the filter's fields named when wrong, and at most 10,000 events a request", async () => {
    const t = await aTenant();
    const token = async (role: "ops" | "accountant") => {
      const r = await createApiToken({ tenant: t.slug, role }, SYSTEM_ACTOR);
      if (!r.ok) throw new Error(r.message);
      return r.value.token;
    };
    type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;
    const call = (h: Handler, bearer: string, body?: unknown, query = "") =>
      h(
        new Request(`http://tally.test/x${query}`, {
          method: body === undefined ? "GET" : "POST",
          headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
        { params: Promise.resolve({ tenant: t.slug }) },
      );
    const opsToken = await token("ops");
    // 10,001 events that failed to parse, written straight to the table (the worker would take minutes).
    await prisma.$executeRaw(Prisma.sql`
      INSERT INTO raw_events (tenant_id, provider, raw_body, headers, status, last_error)
      SELECT ${t.id}::uuid, 'stripe', convert_to('{broken ' || g || '}', 'UTF8'), '{}'::jsonb, 'FAILED', 'Unexpected token'
      FROM generate_series(1, 10001) g`);
    const preview = await call(previewRoute as Handler, opsToken, undefined, "?status=FAILED");
    expect(await preview.json()).toEqual({ matching: 10001, max: 10000 });
    const tooMany = await call(startRoute as Handler, opsToken, {
      filter: { status: "FAILED" },
      expected: 10001,
      reason: "all of them",
    });
    expect(tooMany.status).toBe(422);
    expect(await prisma.rawEvent.count({ where: { tenantId: t.id, status: "FAILED" } })).toBe(10001);

    for (const [body, field] of [
      [{ filter: { status: "DONE" }, expected: 1, reason: "done ones" }, "status"],
      [{ filter: { status: "FAILED", from: "2026-02-30" }, expected: 1, reason: "bad day" }, "from"],
      [{ filter: { status: "FAILED" }, expected: 0, reason: "no preview" }, "expected"],
      [{ filter: { status: "FAILED" }, expected: 1 }, "reason"],
    ] as const) {
      const res = await call(startRoute as Handler, opsToken, body);
      expect(res.status).toBe(400);
      expect(JSON.stringify(await res.json())).toContain(field);
    }
    expect((await call(jobsRoute as Handler, await token("accountant"))).status).toBe(403);
    expect((await call(jobsRoute as Handler, opsToken)).status).toBe(200);
  });
});
