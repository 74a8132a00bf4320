// Dead letters, against a real HTTP receiver: a receipt the receiver keeps
// refusing follows TALLY_RECEIPT_RETRY_SCHEDULE step by step and is then DEAD
// (never picked up again on its own); ops redeliver by id or by a filter
// confirmed against its preview, audited, within their tenant only; the
// redelivered receipt carries the same idempotency key.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "@/dev/testing/receiver";
import { type Actor, SYSTEM_ACTOR } from "@/lib/admin/audit";
import { GET as listRoute } from "@/app/api/v1/tenants/[tenant]/receipts/dead/route";
import { POST as redeliverRoute } from "@/app/api/v1/tenants/[tenant]/receipts/dead/redeliver/route";
import { createApiToken } from "@/lib/auth/api-tokens";
import { aStripePayment, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { silent } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";
import { config, parseDurations, resetConfigForTests } from "@/lib/platform/config";
import { Prisma, prisma } from "@/lib/platform/db";
import { countDeadReceipts, listDeadReceipts, redeliverDeadReceipts } from "@/lib/pipeline/dead-letters";
import { dispatchOutbox } from "@/lib/pipeline/outbox";
import { httpTransport } from "@/lib/pipeline/receipt-transport";
import { processOnce } from "@/lib/pipeline/worker";

const ops: Actor = { type: "USER", id: "00000000-0000-4000-8000-0000000000aa", label: "ops@example.test" };

/** A receiver that answers 503 while `failing`, recording every request's idempotency key. */
const received: { key: string; reference: string }[] = [];
let failing = true;
let server: Receiver;
let url: string;
beforeAll(async () => {
  server = await startReceiver(
    ({ headers, body }) => {
      received.push({ key: String(headers["idempotency-key"]), reference: JSON.parse(body).reference });
    },
    () => (failing ? { status: 503, body: "receiver down for maintenance" } : { status: 204, body: "" }),
  );
  url = `${server.base}/receipts`;
});
afterAll(() => server.close());

function useSchedule(schedule: string) {
  process.env.TALLY_RECEIPT_RETRY_SCHEDULE = schedule;
  resetConfigForTests();
}
beforeEach(async () => {
  failing = true;
  received.length = 0;
  // Each test starts with no undelivered receipt of an earlier one in the way.
  await prisma.$executeRaw`UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL`;
});
afterAll(() => {
  delete process.env.TALLY_RECEIPT_RETRY_SCHEDULE;
  resetConfigForTests();
});

async function pay(t: TestTenant, reference: string): Promise<bigint> {
  const res = await deliver(stripeRequest(t, aStripePayment({ reference })));
  expect(res.status).toBe(200);
  while ((await processOnce(silent)) > 0);
  const posting = await prisma.posting.findFirstOrThrow({
    where: { tenantId: t.id, providerReference: reference },
    include: { outbox: true },
  });
  return posting.outbox[0]!.id;
}

const row = (id: bigint) => prisma.outboxMessage.findUniqueOrThrow({ where: { id } });

/** Dispatches until the receipts given are dead (the schedule is "0ms": one retry, at once). */
async function kill(ids: bigint[]) {
  const transport = httpTransport(url);
  for (let i = 0; i < 5; i++) {
    await dispatchOutbox(transport, 1000);
    const rows = await prisma.outboxMessage.findMany({ where: { id: { in: ids } } });
    if (rows.every((r) => r.deadAt)) return;
  }
  throw new Error("receipts did not die");
}

describe("receipt retries and dead letters", () => {
  it("follows the schedule step by step, then is dead and left alone; the receiver saw one key throughout", async () => {
    useSchedule("0ms,1h");
    const t = await aTenant();
    const id = await pay(t, "pi_schedule_1");
    const transport = httpTransport(url);

    expect(await dispatchOutbox(transport)).toMatchObject({ leased: 1, failed: 1, dead: 0 });
    let r = await row(id);
    // First step: 0 ms, so it is due again at once.
    expect(r).toMatchObject({
      attempts: 1,
      deadAt: null,
      lastError: "receiver answered 503: receiver down for maintenance",
    });
    expect(r.availableAt.getTime()).toBeLessThanOrEqual(Date.now());

    expect(await dispatchOutbox(transport)).toMatchObject({ leased: 1, failed: 1, dead: 0 });
    r = await row(id);
    // Second step: an hour.
    expect(r.deadAt).toBeNull();
    expect(r.availableAt.getTime()).toBeGreaterThan(Date.now() + 3590_000);
    expect((await dispatchOutbox(transport)).leased).toBe(0);

    // The hour passes: the last retry fails too, and the schedule has run out.
    await prisma.outboxMessage.update({ where: { id }, data: { availableAt: new Date() } });
    expect(await dispatchOutbox(transport)).toMatchObject({ leased: 1, failed: 1, dead: 1 });
    r = await row(id);
    expect(r).toMatchObject({ attempts: 3, sentAt: null });
    expect(r.deadAt).toBeInstanceOf(Date);

    // Dead is dead: even when it is due and the receiver is back, nothing picks it up on its own.
    failing = false;
    await prisma.outboxMessage.update({ where: { id }, data: { availableAt: new Date(0) } });
    expect((await dispatchOutbox(transport)).leased).toBe(0);
    expect(received.map((x) => x.key)).toEqual(Array(3).fill(`tally-outbox-${id}`));
    expect(await countDeadReceipts(t.id, {})).toBe(1);
  });

  it("a redelivered receipt goes out again under the same idempotency key, and the request is audited", async () => {
    useSchedule("0ms");
    const t = await aTenant();
    const id = await pay(t, "pi_redeliver_1");
    await kill([id]);
    const listed = await listDeadReceipts(t.id, {});
    expect(listed.total).toBe(1);
    expect(listed.items[0]).toMatchObject({ id, provider: "stripe", reference: "pi_redeliver_1", attempts: 2 });

    failing = false;
    const r = await redeliverDeadReceipts(t.id, { ids: [id], reason: "receiver fixed its TLS certificate" }, ops);
    expect(r).toEqual({ ok: true, value: { redelivered: 1, ids: [String(id)] } });
    expect(await row(id)).toMatchObject({ deadAt: null, attempts: 0 });
    expect(await dispatchOutbox(httpTransport(url))).toMatchObject({ sent: 1, failed: 0 });
    expect((await row(id)).sentAt).toBeInstanceOf(Date);
    expect(new Set(received.map((x) => x.key))).toEqual(new Set([`tally-outbox-${id}`]));

    const audit = await prisma.auditLog.findMany({ where: { tenantId: t.id, action: "receipt.redeliver" } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actorLabel: "ops@example.test",
      subjectType: "outbox",
      subjectId: String(id),
      reason: "receiver fixed its TLS certificate",
      details: { count: 1, ids: [String(id)] },
    });

    // Asking again finds nothing dead: a 409, not a second requeue.
    const again = await redeliverDeadReceipts(t.id, { ids: [id], reason: "once more" }, ops);
    expect(again).toMatchObject({ ok: false, reason: "nothing_to_do" });
  });

  it("a bulk redelivery by filter requeues exactly what its preview counted, in its own tenant only", async () => {
    useSchedule("0ms");
    const a = await aTenant();
    const b = await aTenant();
    const ids = {
      a1: await pay(a, "pi_bulk_a1"),
      a2: await pay(a, "pi_bulk_a2"),
      other: await pay(a, "pi_other_a3"),
      b1: await pay(b, "pi_bulk_b1"),
    };
    await kill(Object.values(ids));
    const filter = { reference: "pi_bulk_" };
    expect(await countDeadReceipts(a.id, filter)).toBe(2);
    // A prefix is literal: % is not a wildcard.
    expect(await countDeadReceipts(a.id, { reference: "pi%" })).toBe(0);
    expect(await countDeadReceipts(a.id, { provider: "stripe" })).toBe(3);

    // The preview said 3 but 2 match: refused, nothing requeued.
    const stale = await redeliverDeadReceipts(a.id, { filter, expected: 3, reason: "bulk" }, ops);
    expect(stale).toMatchObject({ ok: false, reason: "preview_changed" });
    expect(await countDeadReceipts(a.id, filter)).toBe(2);

    const done = await redeliverDeadReceipts(a.id, { filter, expected: 2, reason: "receiver back" }, ops);
    expect(done).toEqual({ ok: true, value: { redelivered: 2, ids: [String(ids.a1), String(ids.a2)] } });
    expect((await row(ids.other)).deadAt).toBeInstanceOf(Date);
    expect((await row(ids.b1)).deadAt).toBeInstanceOf(Date);

    // Another tenant's receipt cannot be named by id.
    const foreign = await redeliverDeadReceipts(a.id, { ids: [ids.b1], reason: "not mine" }, ops);
    expect(foreign).toMatchObject({ ok: false, reason: "nothing_to_do" });
    expect((await row(ids.b1)).deadAt).toBeInstanceOf(Date);
    const audit = await prisma.auditLog.findFirstOrThrow({ where: { tenantId: a.id, action: "receipt.redeliver" } });
    expect(audit.details).toMatchObject({ count: 2, filter: { reference: "pi_bulk_" } });
  });

  it("two people redelivering the same filter at once requeue it once", async () => {
    useSchedule("0ms");
    const t = await aTenant();
    const dead = [await pay(t, "pi_race_1"), await pay(t, "pi_race_2"), await pay(t, "pi_race_3")];
    await kill(dead);
    const results = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        redeliverDeadReceipts(t.id, { filter: { reference: "pi_race_" }, expected: 3, reason: `person ${i}` }, ops),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.reason)).toEqual(Array(3).fill("preview_changed"));
    const [audits] = await prisma.$queryRaw<{ n: bigint }[]>(Prisma.sql`
      SELECT count(*) AS n FROM audit_log WHERE tenant_id = ${t.id}::uuid AND action = 'receipt.redeliver'`);
    expect(audits!.n).toBe(1n);
  });

  it("the schedule is read from TALLY_RECEIPT_RETRY_SCHEDULE, with a message naming a bad step", () => {
    expect(parseDurations("5s,5m,30m,2h,5h,10h,10h")).toEqual([
      5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
    useSchedule("5s, 2x");
    expect(() => config()).toThrow(/TALLY_RECEIPT_RETRY_SCHEDULE: "2x" is not a duration/);
    useSchedule("0ms");
    expect(config().TALLY_RECEIPT_RETRY_SCHEDULE).toEqual([0]);
  });
});

describe("the redelivery API", () => {
  type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;
  async function tokenFor(t: TestTenant, role: "ops" | "accountant") {
    const r = await createApiToken({ tenant: t.slug, role }, SYSTEM_ACTOR);
    if (!r.ok) throw new Error(r.message);
    return r.value.token;
  }
  const call = (handler: Handler, t: TestTenant, token: string, body?: unknown, query = "") =>
    handler(
      new Request(`http://tally.test/api/v1/x${query}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
      { params: Promise.resolve({ tenant: t.slug }) },
    );

  it("lists and previews for ops, redelivers for ops only, and names what is wrong with a request", async () => {
    useSchedule("0ms");
    const t = await aTenant();
    const id = await pay(t, "pi_api_1");
    await kill([id]);
    const opsToken = await tokenFor(t, "ops");

    const list = await call(listRoute as Handler, t, opsToken, undefined, "?reference=pi_api_");
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({ total: 1, items: [{ id: String(id), reference: "pi_api_1" }] });

    const bad: [unknown, string][] = [
      [{ reason: "both", ids: [String(id)], filter: {}, expected: 1 }, "ids"],
      [{ reason: "neither" }, "ids"],
      [{ reason: "no preview", filter: { reference: "pi_api_" } }, "expected"],
      [{ reason: "x", ids: [String(id)] }, "reason"],
      [{ reason: "not an id", ids: ["-1"] }, "ids"],
    ];
    for (const [body, field] of bad) {
      const res = await call(redeliverRoute as Handler, t, opsToken, body);
      expect(res.status).toBe(400);
      expect(JSON.stringify(await res.json())).toContain(field);
    }
    const accountant = await call(redeliverRoute as Handler, t, await tokenFor(t, "accountant"), {
      ids: [String(id)],
      reason: "not my job",
    });
    expect(accountant.status).toBe(403);

    const changed = await call(redeliverRoute as Handler, t, opsToken, {
      filter: { reference: "pi_api_" },
      expected: 5,
      reason: "stale preview",
    });
    expect(changed.status).toBe(409);
    expect(((await changed.json()) as { error: { code: string } }).error.code).toBe("preview_changed");

    const ok = await call(redeliverRoute as Handler, t, opsToken, {
      filter: { reference: "pi_api_" },
      expected: 1,
      reason: "receiver back",
    });
    expect(ok.status).toBe(202);
    expect(await ok.json()).toEqual({ redelivered: 1, ids: [String(id)] });
  });
});
