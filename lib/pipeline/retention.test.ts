// raw_events by month and the retention of raw bodies (issue #21.4), on a real
// partitioned PostgreSQL: the migration converts a filled table without losing
// or changing a row; months are made ahead, concurrently, once; a missing month
// is a 503, never a 500 or a lost event; bodies past a tenant's retention go,
// their hash, claims and postings stay, and what is still needed is kept.
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { GET as eventRoute } from "@/app/api/v1/tenants/[tenant]/events/[id]/route";
import { PATCH as tenantRoute } from "@/app/api/v1/tenants/[tenant]/route";
import { aStripePayment, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { drain, drainAll } from "@/dev/testing/drain";
import { fileTenant } from "@/dev/testing/file-tenant";
import { deliver } from "@/dev/testing/route";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { setRawBodyRetention } from "@/lib/admin/tenants";
import { createApiToken } from "@/lib/auth/api-tokens";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { previewBulkReprocess } from "@/lib/pipeline/bulk-reprocess";
import { pickedRowsSql } from "@/lib/pipeline/claim";
import { reprocessEvent } from "@/lib/pipeline/reprocess";
import {
  ensurePartitions,
  listPartitions,
  maintainRawEvents,
  partitionedUntil,
  purgeTenantBodies,
} from "@/lib/pipeline/retention";
import { MIGRATIONS_DIR, migrate } from "@/lib/platform/migrate";
import { pool, prisma } from "@/lib/platform/db";

const tenant = fileTenant();
const DAY = 86_400_000;
const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest();
const monthOf = (d: Date, ahead = 0) =>
  new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + ahead, 1)).toISOString().slice(0, 7);

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

describe("the migration to partitions", () => {
  it("keeps every row of a filled raw_events as it was, each key and trigger working, in one attached partition", async () => {
    const adminUrl = process.env.TALLY_TEST_ADMIN_URL!;
    const name = `partition_conv_${process.pid}`;
    await withClient(adminUrl, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${name}`);
      await c.query(`CREATE DATABASE ${name}`);
    });
    const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
    // The migrations before this one only.
    const before = mkdtempSync(path.join(tmpdir(), "tally-migrations-"));
    for (const d of readdirSync(MIGRATIONS_DIR).filter((d) => d < "20261206050000_raw_events_by_month"))
      cpSync(path.join(MIGRATIONS_DIR, d), path.join(before, d), { recursive: true });
    await migrate(url, before);

    const columns =
      "id, tenant_id, provider, source, raw_body, headers, delivery_id, received_at, status, attempts, last_error, duplicate_of_id, event_type, note, movement_references, processed_at";
    const fingerprint = (c: pg.Client) =>
      c
        .query<{ n: string; md5: string }>(
          `SELECT count(*) AS n, md5(string_agg(row(${columns})::text, '|' ORDER BY id)) AS md5 FROM raw_events`,
        )
        .then((r) => r.rows[0]!);
    const old = await withClient(url, async (c) => {
      const t = await c.query<{ id: string }>(`INSERT INTO tenants (slug, name) VALUES ('conv', 'Conv') RETURNING id`);
      const tenantId = t.rows[0]!.id;
      // 600 rows over six months: every status, bodies that are not UTF-8, duplicates of earlier rows,
      // a claim for each DONE one, PayPal transmissions.
      await c.query(
        `INSERT INTO raw_events (tenant_id, provider, raw_body, headers, delivery_id, received_at, status, attempts, event_type, movement_references, processed_at)
         SELECT $1, CASE WHEN g % 10 = 0 THEN 'paypal'::"Provider" ELSE 'stripe'::"Provider" END,
                CASE WHEN g % 7 = 0 THEN decode('fffe00' || lpad(to_hex(g), 4, '0'), 'hex') ELSE convert_to('{"n":' || g || '}', 'UTF8') END,
                jsonb_build_object('n', g), CASE WHEN g % 10 = 0 THEN 'WH-' || g END,
                now() - make_interval(days => g % 180), (ARRAY['RECEIVED','DONE','IGNORED','FAILED','CLAIMED'])[1 + g % 5]::"RawEventStatus",
                g % 3, 'payment_intent.succeeded', ARRAY['pi_' || g], CASE WHEN g % 5 IN (1, 2, 3) THEN now() END
           FROM generate_series(1, 600) g`,
        [tenantId],
      );
      await c.query(
        `INSERT INTO raw_events (tenant_id, provider, raw_body, headers, status, duplicate_of_id)
         SELECT $1, 'stripe', convert_to('{"dup":' || id || '}', 'UTF8'), '{}', 'DUPLICATE', id FROM raw_events WHERE status = 'DONE' AND id <= 100`,
        [tenantId],
      );
      await c.query(
        `INSERT INTO processed_events (idempotency_key, tenant_id, provider, provider_reference, raw_event_id, status, done_at)
         SELECT tenant_id || ':' || provider || ':pi_' || id, tenant_id, provider, 'pi_' || id, id, 'DONE', now() FROM raw_events WHERE status = 'DONE' AND duplicate_of_id IS NULL`,
      );
      return {
        tenantId,
        ...(await fingerprint(c)),
        queued: (await c.query("SELECT count(*) FROM raw_event_queue")).rows[0].count,
      };
    });
    expect(Number(old.n)).toBe(620);

    await migrate(url);
    await withClient(url, async (c) => {
      expect(await fingerprint(c)).toEqual({ n: old.n, md5: old.md5 });
      const where = await c.query(`SELECT tableoid::regclass::text AS part, count(*) FROM raw_events GROUP BY 1`);
      expect(where.rows).toEqual([{ part: "raw_events_before_partitioning", count: "620" }]);
      expect((await c.query("SELECT count(*) FROM raw_event_queue")).rows[0].count).toBe(old.queued);
      // Every old body's hash, computed by the migration.
      const hashes = await c.query(
        `SELECT count(*) FILTER (WHERE body_sha256 = sha256(raw_body)) AS ok FROM raw_events`,
      );
      expect(hashes.rows[0].ok).toBe("620");
      // A new event: a time-telling id in this month's partition, queued by the trigger.
      const now = new Date();
      const fresh = await c.query<{ id: string; part: string }>(
        `INSERT INTO raw_events (tenant_id, provider, raw_body, headers) VALUES ($1, 'stripe', '\\x7b7d', '{}')
         RETURNING id, tableoid::regclass::text AS part`,
        [old.tenantId],
      );
      const id = BigInt(fresh.rows[0]!.id);
      expect(Number(id >> 20n)).toBeGreaterThanOrEqual(now.getTime() - 60_000);
      expect(Number(id >> 20n)).toBeLessThanOrEqual(Date.now() + 60_000);
      expect(fresh.rows[0]!.part).toBe(`raw_events_y${monthOf(now).replace("-", "m")}`);
      expect(
        (await c.query("SELECT count(*) FROM raw_event_queue WHERE raw_event_id = $1", [String(id)])).rows[0].count,
      ).toBe("1");
      // Keys still hold: a claim of no event, and a duplicate of no event, are refused.
      await expect(
        c.query(
          `INSERT INTO processed_events (idempotency_key, tenant_id, provider, provider_reference, raw_event_id, status) VALUES ('k:none', $1, 'stripe', 'pi_none', 999999999, 'CLAIMED')`,
          [old.tenantId],
        ),
      ).rejects.toThrow(/processed_events_raw_event_id_fkey/);
      await expect(
        c.query(`UPDATE raw_events SET status = 'DUPLICATE', duplicate_of_id = 999999999 WHERE id = $1`, [String(id)]),
      ).rejects.toThrow(/raw_events_duplicate_of_id_fkey/);
      // A PayPal transmission stored before the migration still admits no second body.
      const again = await c.query(
        `INSERT INTO raw_events (tenant_id, provider, raw_body, headers, delivery_id) VALUES ($1, 'paypal', '\\x00', '{}', 'WH-10') RETURNING id`,
        [old.tenantId],
      );
      expect(again.rowCount).toBe(0);
      // The months ahead exist.
      const parts = await c.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'raw_events'::regclass`,
      );
      for (const ahead of [0, 1, 2, 3])
        expect(parts.rows.map((r) => r.name)).toContain(`raw_events_y${monthOf(now, ahead).replace("-", "m")}`);
    });
    await withClient(adminUrl, (c) => c.query(`DROP DATABASE ${name} WITH (FORCE)`));
  });
});

describe("partitions by month", () => {
  it("are made ahead once though replicas ask at the same moment, and say until when ingest works", async () => {
    const now = new Date();
    const made = await Promise.all(Array.from({ length: 6 }, () => ensurePartitions(8)));
    // The migration made four months; six concurrent passes made each of the others exactly once.
    expect(made.flat().sort()).toEqual(
      [4, 5, 6, 7, 8].map((ahead) => `raw_events_y${monthOf(now, ahead).replace("-", "m")}`).sort(),
    );
    const months = (await listPartitions()).flatMap((p) => (p.month ? [p.month] : []));
    for (let ahead = 0; ahead <= 8; ahead++) expect(months).toContain(monthOf(now, ahead));
    expect((await partitionedUntil(now)).toISOString().slice(0, 7)).toBe(monthOf(now, 9));
    expect(await ensurePartitions(8)).toEqual([]);
  });

  it("route an event by the month its id tells, and refuse a month that has none", async () => {
    const db = pool();
    const insertAt = (at: string) =>
      db.query<{ part: string }>(
        `INSERT INTO raw_events (id, tenant_id, provider, raw_body, headers, received_at)
         VALUES (tally_raw_event_id_at($2), $1, 'stripe', '\\x7b7d', '{}', $2) RETURNING tableoid::regclass::text AS part`,
        [tenant.id, at],
      );
    await expect(insertAt("2025-03-15T10:00:00Z")).rejects.toThrow(/no partition of relation "raw_events"/);
    await db.query("SELECT tally_create_raw_event_partition('2025-03-01')");
    expect((await insertAt("2025-03-15T10:00:00Z")).rows[0]!.part).toBe("raw_events_y2025m03");
    // The month's bounds are UTC midnights.
    expect((await insertAt("2025-03-31T23:59:59.999Z")).rows[0]!.part).toBe("raw_events_y2025m03");
    await expect(insertAt("2025-04-01T00:00:00Z")).rejects.toThrow(/no partition/);
  });

  it("a pick-up reads only the months its events are in, however many months there are", async () => {
    const db = pool();
    for (const month of ["2024-01-01", "2024-02-01", "2024-03-01", "2024-04-01"])
      await db.query("SELECT tally_create_raw_event_partition($1)", [month]);
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO raw_events (id, tenant_id, provider, raw_body, headers, received_at)
       VALUES (tally_raw_event_id_at($2), $1, 'stripe', '\\x7b7d', '{}', $2) RETURNING id`,
      [tenant.id, "2024-02-10T10:00:00Z"],
    );
    const picked = pickedRowsSql([BigInt(rows[0]!.id)]);
    // Planned as the worker's unnamed statement is: with its parameters' values.
    const plan = (await db.query(`EXPLAIN (COSTS OFF) ${picked.text}`, picked.values)).rows
      .map((r) => r["QUERY PLAN"] as string)
      .join("\n");
    expect(plan.match(/raw_events_\w+/g)?.filter((n) => !n.endsWith("_pkey") && !/_id_/.test(n))).toEqual([
      "raw_events_y2024m02",
    ]);
  });

  it("a missing month is a 503 naming it, nothing stored, and the same delivery is taken once the month exists", async () => {
    const db = pool();
    const now = new Date();
    const current = `raw_events_y${monthOf(now).replace("-", "m")}`;
    const payment = aStripePayment({ amount: 700n, account: "acct_month" });
    const before = await prisma.rawEvent.count();
    await db.query(`ALTER TABLE raw_events DETACH PARTITION ${current}`);
    try {
      const res = await deliver(stripeRequest(tenant, payment));
      expect(res.status).toBe(503);
      const body = await res.json();
      expect(body).toMatchObject({ error: { code: "no_partition", message: expect.stringContaining("partition") } });
      expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
      expect(await prisma.rawEvent.count()).toBe(before);
      // The maintenance job will not paper over a table of that name that is not attached.
      await expect(ensurePartitions(0)).rejects.toThrow(/exists but is not a partition of raw_events/);
    } finally {
      await db.query(
        `ALTER TABLE raw_events ATTACH PARTITION ${current} FOR VALUES FROM (tally_raw_event_id_floor(date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')) TO (tally_raw_event_id_floor((date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC'))`,
      );
    }
    expect((await deliver(stripeRequest(tenant, payment))).status).toBe(200);
    await drain();
    expect(
      await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: payment.data.object.id } }),
    ).toBe(1);
  });
});

describe("retention of raw bodies", () => {
  async function dayOfTraffic(t: TestTenant) {
    const send = async (event: object | string) => expect((await deliver(stripeRequest(t, event))).status).toBe(200);
    const paid = aStripePayment({ amount: 1500n, account: "acct_kept" });
    await send(paid);
    await drainAll();
    await send({ ...paid, id: "evt_retry" }); // DUPLICATE
    await send("{broken"); // FAILED
    const disputed = aStripePayment({ amount: 100n, account: "acct_disputed" });
    await send(disputed);
    await drainAll();
    // A retry whose money changed: a CONFLICT, its case open; both bodies are evidence.
    await send({ ...disputed, id: "evt_changed", data: { object: { ...disputed.data.object, amount_received: 120 } } });
    await drainAll();
    await send(aStripePayment({ amount: 300n })); // RECEIVED: not drained
    const raws = await prisma.rawEvent.findMany({ where: { tenantId: t.id }, orderBy: { id: "asc" } });
    expect(raws.map((r) => r.status)).toEqual(["DONE", "DUPLICATE", "FAILED", "DONE", "CONFLICT", "RECEIVED"]);
    return raws;
  }

  it("removes bodies past the tenant's retention, keeps their hash, claims and postings, and keeps what is still needed", async () => {
    const t = await aTenant();
    const raws = await dayOfTraffic(t);
    const postings = await prisma.posting.findMany({ where: { tenantId: t.id }, include: { entries: true } });
    const claims = await prisma.processedEvent.findMany({ where: { tenantId: t.id } });

    // 399 days later: nothing is past a 400-day retention.
    expect(await purgeTenantBodies(t.id, { now: new Date(Date.now() + 399 * DAY) })).toMatchObject({ purged: 0 });
    expect(await prisma.rawEvent.count({ where: { tenantId: t.id, rawBody: null } })).toBe(0);

    const later = new Date(Date.now() + 401 * DAY);
    const r = await purgeTenantBodies(t.id, { now: later, batch: 2 });
    expect(r).toMatchObject({ purged: 3, kept: 3, complete: true });
    const after = await prisma.rawEvent.findMany({ where: { tenantId: t.id }, orderBy: { id: "asc" } });
    // DONE, DUPLICATE, FAILED: gone. The disputed payment's DONE and its CONFLICT: an open case's evidence.
    // RECEIVED: the worker has yet to parse it.
    expect(after.map((e) => e.rawBody !== null)).toEqual([false, false, false, true, true, true]);
    for (const [i, e] of after.entries()) {
      expect(Buffer.from(e.bodySha256)).toEqual(sha256(raws[i]!.rawBody!));
      expect(e.bodyPurgedAt !== null).toBe(e.rawBody === null);
      expect(e.status).toBe(raws[i]!.status);
    }
    expect(await prisma.posting.findMany({ where: { tenantId: t.id }, include: { entries: true } })).toEqual(postings);
    expect(await prisma.processedEvent.findMany({ where: { tenantId: t.id } })).toEqual(claims);
    expect(await ledgerViolations()).toEqual([]);
    // The watermark stops at the first body kept, so it is looked at again next time.
    const watermark = await prisma.tenant.findUniqueOrThrow({ where: { id: t.id } });
    expect(watermark.rawBodiesPurgedBefore).toEqual(after[3]!.receivedAt);
    expect(await purgeTenantBodies(t.id, { now: later })).toMatchObject({ purged: 0, kept: 3 });

    // A purged event cannot be processed again, alone or in bulk, and says why.
    const failed = after[2]!;
    expect(await reprocessEvent(t.id, failed.id, SYSTEM_ACTOR, "parser fixed", 0)).toMatchObject({
      ok: false,
      reason: "body_purged",
      message: expect.stringContaining("only its SHA-256 is kept"),
    });
    expect(await previewBulkReprocess(t.id, { status: "FAILED" })).toBe(0);
    // The event's page and API show the hash and when, not a body.
    const token = await createApiToken({ tenant: t.slug, role: "ops" }, SYSTEM_ACTOR);
    if (!token.ok) throw new Error(token.message);
    const res = await eventRoute(
      new Request(`http://tally.test/api/v1/tenants/${t.slug}/events/${failed.id}`, {
        headers: { authorization: `Bearer ${token.value.token}` },
      }),
      { params: Promise.resolve({ tenant: t.slug, id: String(failed.id) }) },
    );
    expect(res.status).toBe(200);
    expect((await res.json()).event.body).toEqual({
      purged: true,
      text: null,
      purgedAt: failed.bodyPurgedAt!.toISOString(),
      sha256: sha256("{broken").toString("hex"),
    });
  });

  it("the database keeps a body as it came: never rewritten, never gone without a date, never gone while it is to be worked", async () => {
    const t = await aTenant();
    await deliver(stripeRequest(t, aStripePayment({ amount: 5n })));
    const raw = await prisma.rawEvent.findFirstOrThrow({ where: { tenantId: t.id } });
    const db = pool();
    await expect(db.query(`UPDATE raw_events SET raw_body = '\\x00' WHERE id = $1`, [String(raw.id)])).rejects.toThrow(
      /never rewritten/,
    );
    await expect(
      db.query(`UPDATE raw_events SET body_sha256 = '\\x00' WHERE id = $1`, [String(raw.id)]),
    ).rejects.toThrow(/never rewritten/);
    await expect(db.query(`UPDATE raw_events SET raw_body = NULL WHERE id = $1`, [String(raw.id)])).rejects.toThrow(
      /raw_events_body_or_its_purge/,
    );
    await expect(
      db.query(`UPDATE raw_events SET raw_body = NULL, body_purged_at = now() WHERE id = $1`, [String(raw.id)]),
    ).rejects.toThrow(/raw_events_worked_has_body/);
    // A body can only come in with the row: a hash given by hand is replaced by the body's.
    const given = await db.query<{ ok: boolean }>(
      `INSERT INTO raw_events (tenant_id, provider, raw_body, headers, body_sha256) VALUES ($1, 'stripe', '\\x7b7d', '{}', '\\x00')
       RETURNING body_sha256 = sha256('\\x7b7d'::bytea) AS ok`,
      [t.id],
    );
    expect(given.rows[0]!.ok).toBe(true);
  });

  it("is set per tenant by an admin, with a reason, audited, and the next pass honours it", async () => {
    // A tenant left at 400 days, beside the one whose retention changes.
    const other = await aTenant();
    expect((await deliver(stripeRequest(other, aStripePayment({ amount: 9n })))).status).toBe(200);
    await drainAll();
    const t = await aTenant();
    await dayOfTraffic(t);
    expect(await setRawBodyRetention(t.slug, 29, SYSTEM_ACTOR, "too short")).toMatchObject({
      ok: false,
      reason: "invalid_retention",
    });
    expect(await setRawBodyRetention(t.slug, 60, SYSTEM_ACTOR, " ")).toMatchObject({
      ok: false,
      reason: "reason_required",
    });
    const call = async (role: "ops" | "admin", body: unknown) => {
      const token = await createApiToken({ tenant: t.slug, role }, SYSTEM_ACTOR);
      if (!token.ok) throw new Error(token.message);
      return tenantRoute(
        new Request(`http://tally.test/api/v1/tenants/${t.slug}`, {
          method: "PATCH",
          headers: { authorization: `Bearer ${token.value.token}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
        { params: Promise.resolve({ tenant: t.slug }) },
      );
    };
    expect((await call("ops", { rawBodyRetentionDays: 60, reason: "x" })).status).toBe(403);
    const bad = await call("admin", { rawBodyRetentionDays: 10, reason: "x" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain("rawBodyRetentionDays");
    const ok = await call("admin", { rawBodyRetentionDays: 60, reason: "contract ended: keep two months" });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ rawBodyRetentionDays: 60, previous: 400 });
    expect(
      await prisma.auditLog.findFirst({
        where: { tenantId: t.id, action: "tenant.retention" },
        select: { reason: true, details: true },
      }),
    ).toEqual({
      reason: "contract ended: keep two months",
      details: { rawBodyRetentionDays: { from: 400, to: 60 } },
    });
    // 61 days on, the maintenance pass removes this tenant's bodies; the other keeps its own.
    const m = await maintainRawEvents({ monthsAhead: 3, now: new Date(Date.now() + 61 * DAY) });
    expect(m.purges.find((p) => p.tenantId === t.id)).toMatchObject({ purged: 3 });
    expect(m.purges.find((p) => p.tenantId === other.id)).toMatchObject({ purged: 0, complete: true });
    expect(await prisma.rawEvent.count({ where: { tenantId: other.id, rawBody: null } })).toBe(0);
  });
});
