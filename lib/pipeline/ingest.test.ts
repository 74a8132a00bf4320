import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { DELETE, GET } from "@/app/api/webhooks/[tenant]/[provider]/route";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { resetConfigForTests } from "@/lib/platform/config";
import { closeDb, prisma } from "@/lib/platform/db";
import { forgetEndpoints } from "@/lib/pipeline/endpoint-cache";
import { metrics } from "@/lib/platform/metrics";
import { addSecret, createTenant, generateSecret } from "@/lib/admin/tenants";
import {
  aStandardPayment,
  aStripePayment,
  aTenant,
  standardHeaders,
  stripeRequest,
  stripeSignatureHeader,
  webhookRequest,
  type TestTenant,
} from "@/dev/testing/builders";
import { fileTenant } from "@/dev/testing/file-tenant";
import { deliver } from "@/dev/testing/route";

const tenant = fileTenant();

const storedFor = (t: TestTenant) => prisma.rawEvent.count({ where: { tenantId: t.id } });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;
const rejected = async (reason: string, hint?: string) =>
  (await metrics().webhooksRejected.get()).values
    .filter((v) => v.labels.reason === reason && (hint === undefined || v.labels.hint === hint))
    .reduce((sum, v) => sum + v.value, 0);

describe("POST /api/webhooks/{tenant}/{provider}", () => {
  it("stores a signed Stripe event byte for byte and answers 200", async () => {
    // Odd spacing and non-ASCII: the stored bytes must be exactly these, not a re-serialisation.
    const body = `{"id": "evt_x",  "type":"payment_intent.succeeded", "note":"café \\u00e9 ✓",\n "data":{"object":{}}}`;
    const res = await deliver(stripeRequest(tenant, body));
    expect(res.status).toBe(200);
    const row = await prisma.rawEvent.findFirstOrThrow({ where: { tenantId: tenant.id }, orderBy: { id: "desc" } });
    expect(Buffer.from(row.rawBody!).equals(Buffer.from(body, "utf8"))).toBe(true);
    expect(row).toMatchObject({ provider: "stripe", status: "RECEIVED", source: "WEBHOOK" });
    expect(row.headers).toMatchObject({
      "stripe-signature": expect.stringMatching(/^t=\d+,v1=/),
      "content-type": "application/json",
    });
  });

  it("stores a Standard Webhooks delivery with its webhook-id", async () => {
    const body = JSON.stringify(aStandardPayment());
    const res = await deliver(
      webhookRequest(tenant.slug, "standard", body, standardHeaders(body, tenant.standardSecret, { id: "msg_abc" })),
    );
    expect(res.status).toBe(200);
    const row = await prisma.rawEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, provider: "standard" },
      orderBy: { id: "desc" },
    });
    expect(row.deliveryId).toBe("msg_abc");
    expect(Buffer.from(row.rawBody!).toString()).toBe(body);
  });

  describe("refuses bad signatures with 401, naming the check, storing nothing", () => {
    const cases: [string, () => Request, string, string][] = [
      [
        "missing header",
        () => webhookRequest(tenant.slug, "stripe", "{}", {}),
        "missing_header",
        "Missing Stripe-Signature header",
      ],
      [
        "tampered body",
        () => {
          const body = JSON.stringify(aStripePayment());
          return webhookRequest(tenant.slug, "stripe", body.replace("1250", "9250"), {
            "stripe-signature": stripeSignatureHeader(body, tenant.stripeSecret),
          });
        },
        "no_signature_matched",
        "No Stripe-Signature v1 signature matched",
      ],
      [
        "wrong secret",
        () => stripeRequest(tenant, aStripePayment(), { secret: generateSecret("stripe") }),
        "no_signature_matched",
        "matched an active secret",
      ],
      [
        "stale timestamp",
        () => stripeRequest(tenant, aStripePayment(), { timestamp: Math.floor(Date.now() / 1000) - 3600 }),
        "timestamp_outside_tolerance",
        "outside the 300 s tolerance",
      ],
      [
        "standard, missing headers",
        () => webhookRequest(tenant.slug, "standard", "{}", { "webhook-id": "m1" }),
        "missing_header",
        "Missing webhook-timestamp, webhook-signature headers",
      ],
    ];
    for (const [name, request, reason, message] of cases) {
      it(name, async () => {
        const before = await storedFor(tenant);
        const counted = await rejected(reason);
        const res = await deliver(request());
        expect(res.status).toBe(401);
        const error = await errorOf(res);
        expect(error.code).toBe(reason);
        expect(error.message).toContain(message);
        expect(await storedFor(tenant)).toBe(before);
        expect(await rejected(reason)).toBe(counted + 1);
      });
    }
  });

  it("names the likely cause of a failed verification in the 401 and in the metric's hint label", async () => {
    const event = JSON.stringify(aStripePayment());
    const signed = stripeSignatureHeader(event, tenant.stripeSecret);
    // A framework parsed the JSON and re-stringified it, indented, before Tally saw it.
    const reserialized = JSON.stringify(JSON.parse(event), null, 2);
    const counted = await rejected("no_signature_matched", "body_reserialized");
    const res = await deliver(webhookRequest(tenant.slug, "stripe", reserialized, { "stripe-signature": signed }));
    expect(res.status).toBe(401);
    const error = await errorOf(res);
    expect(error.message).toContain("Likely cause: the signature matches this body re-serialised as compact JSON");
    expect(error.message).toMatch(/\(hint: body_reserialized\)$/);
    expect(await rejected("no_signature_matched", "body_reserialized")).toBe(counted + 1);

    const skewed = await deliver(
      stripeRequest(tenant, aStripePayment(), { timestamp: Math.floor(Date.now() / 1000) + 900 }),
    );
    expect((await errorOf(skewed)).message).toMatch(
      /in the future, outside the 300 s tolerance\. Likely cause: this server's clock is at least (599|600) s slow.*\(hint: clock_skew\)$/,
    );
  });

  it("accepts the old and the new secret during a rotation overlap, and only the new one after it", async () => {
    const t = await aTenant();
    const oldSecret = t.stripeSecret;
    const newSecret = generateSecret("stripe");
    const r = await addSecret(t.slug, "stripe", newSecret, { overlapSeconds: 3600 }, SYSTEM_ACTOR);
    expect(r.ok && r.value.expiring).toBe(1);
    expect((await deliver(stripeRequest(t, aStripePayment(), { secret: oldSecret }))).status).toBe(200);
    expect((await deliver(stripeRequest(t, aStripePayment(), { secret: newSecret }))).status).toBe(200);
    // End the overlap now.
    await addSecret(t.slug, "stripe", generateSecret("stripe"), { overlapSeconds: 0 }, SYSTEM_ACTOR);
    forgetEndpoints();
    expect((await deliver(stripeRequest(t, aStripePayment(), { secret: oldSecret }))).status).toBe(401);
  });

  it("answers 404 for an unknown tenant, provider, or a provider the tenant has not set up", async () => {
    const res1 = await deliver(stripeRequest({ ...tenant, slug: "nobody-here" }, aStripePayment()));
    expect(res1.status).toBe(404);
    expect(await errorOf(res1)).toEqual({
      code: "unknown_endpoint",
      message: "No enabled stripe endpoint at this URL; check the webhook URL the provider was given",
    });
    const res2 = await deliver(webhookRequest(tenant.slug, "moneybags", "{}", {}));
    expect(res2.status).toBe(404);
    expect((await errorOf(res2)).code).toBe("unknown_provider");
    const bare = await createTenant({ slug: `bare-${Date.now()}`, name: "Bare" }, SYSTEM_ACTOR);
    const res3 = await deliver(webhookRequest(bare.ok ? bare.value.slug : "", "stripe", "{}", {}));
    expect(res3.status).toBe(404);
    expect(await errorOf(res3)).toMatchObject({
      code: "unknown_endpoint",
      message: expect.stringContaining("No enabled stripe endpoint"),
    });
  });

  it("answers an unknown tenant and a tenant without the endpoint byte for byte the same, so probing finds no slugs", async () => {
    const bare = await createTenant({ slug: `probe-${Date.now()}`, name: "Probe" }, SYSTEM_ACTOR);
    if (!bare.ok) throw new Error(bare.message);
    const answer = async (slug: string) => {
      const res = await deliver(stripeRequest({ ...tenant, slug }, aStripePayment()));
      return { status: res.status, headers: [...res.headers], body: await res.text() };
    };
    const missing = await answer(`no-such-${Date.now()}`);
    expect(missing.status).toBe(404);
    expect(await answer(bare.value.slug)).toEqual(missing);
    const rejected = await metrics().webhooksRejected.get();
    expect(rejected.values.filter((v) => v.labels.reason === "unknown_tenant")).toEqual([]);
  });

  it("answers 404, never 500, to a tenant segment that cannot be a slug, and stores nothing", async () => {
    const before = await storedFor(tenant);
    for (const slug of [
      "acme\u0000",
      `${tenant.slug}\u0000`,
      "a".repeat(10_000),
      tenant.slug.toUpperCase(),
      "..%2Facme",
      "\u00e9t\u00e9",
    ]) {
      const res = await deliver(stripeRequest({ ...tenant, slug }, aStripePayment()));
      expect({ slug: slug.slice(0, 40), status: res.status }).toEqual({ slug: slug.slice(0, 40), status: 404 });
      expect((await errorOf(res)).code).toBe("unknown_endpoint");
    }
    // Percent-encoding that is not UTF-8: Next.js cannot decode it into params, proxy.ts answers first.
    const malformed = await deliver(webhookRequest("%C0%AE", "stripe", "{}", {}));
    expect(malformed.status).toBe(400);
    expect((await errorOf(malformed)).code).toBe("malformed_path");
    expect(await storedFor(tenant)).toBe(before);
  });

  it("answers 413 for a body over 1 MiB declared in Content-Length, without reading it", async () => {
    const before = await storedFor(tenant);
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const req = new Request(`http://tally.test/api/webhooks/${tenant.slug}/stripe`, {
      method: "POST",
      body: stream,
      headers: { "content-length": String(2 * 1024 * 1024) },
      duplex: "half",
    } as RequestInit);
    const res = await deliver(req);
    expect(res.status).toBe(413);
    expect((await errorOf(res)).message).toContain("exceeds the 1048576-byte limit");
    expect(pulled).toBeLessThanOrEqual(1);
    expect(await storedFor(tenant)).toBe(before);
  });

  it("answers 413 for an undeclared (chunked) body once it passes 1 MiB, having read no more than that", async () => {
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        sent += 64 * 1024;
        c.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const req = new Request(`http://tally.test/api/webhooks/${tenant.slug}/stripe`, {
      method: "POST",
      body: stream,
      duplex: "half",
    } as RequestInit);
    const res = await deliver(req);
    expect(res.status).toBe(413);
    expect(sent).toBeLessThan(1024 * 1024 + 4 * 64 * 1024);
  });

  it("answers 405 with Allow: POST to other methods", async () => {
    for (const handler of [GET, DELETE]) {
      const res = handler();
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect((await errorOf(res)).code).toBe("method_not_allowed");
    }
  });
});

describe("when the database is unavailable", () => {
  const admin = () => new pg.Client({ connectionString: process.env.TALLY_TEST_ADMIN_URL });
  const dbName = () => new URL(process.env.DATABASE_URL!).pathname.slice(1);
  async function setConnections(allow: boolean) {
    const c = admin();
    await c.connect();
    await c.query(`ALTER DATABASE ${dbName()} ALLOW_CONNECTIONS ${allow}`);
    if (!allow)
      await c.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [dbName()],
      );
    await c.end();
  }
  afterEach(async () => {
    await setConnections(true);
    await closeDb();
    delete process.env.TALLY_SECRET_CACHE_TTL_MS;
    process.env.TALLY_SECRET_CACHE_TTL_MS = "0";
    resetConfigForTests();
  });

  it("answers 503 (so the provider retries) when the secrets cannot be read", async () => {
    await closeDb();
    await setConnections(false);
    const res = await deliver(stripeRequest(tenant, aStripePayment()));
    expect(res.status).toBe(503);
    expect(await errorOf(res)).toEqual({
      code: "database_unavailable",
      message: "Database unavailable; nothing was stored, retry later",
    });
  });

  it("answers 503, never 200, when the insert cannot be made", async () => {
    process.env.TALLY_SECRET_CACHE_TTL_MS = "600000";
    resetConfigForTests();
    forgetEndpoints();
    expect((await deliver(stripeRequest(tenant, aStripePayment()))).status).toBe(200); // warms the secret cache
    const before = await storedFor(tenant);
    await closeDb();
    await setConnections(false);
    const res = await deliver(stripeRequest(tenant, aStripePayment()));
    expect(res.status).toBe(503);
    await setConnections(true);
    await closeDb();
    expect(await storedFor(tenant)).toBe(before);
  });
});
