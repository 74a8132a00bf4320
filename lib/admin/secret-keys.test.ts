import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { aStripePayment, aTenant, stripeRequest } from "@/dev/testing/builders";
import { deliver } from "@/dev/testing/route";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { checkEncryptionKeys, rotateEncryptionKey, sealPlaintextSecrets } from "@/lib/admin/secret-keys";
import { generateSecret, updateEndpointSettings } from "@/lib/admin/tenants";
import { resetConfigForTests } from "@/lib/platform/config";
import { databaseUrl, prisma } from "@/lib/platform/db";
import { forgetEndpoints } from "@/lib/pipeline/endpoint-cache";
import { forgetEncryptionKeys, keyFileFor } from "@/lib/platform/secrets-at-rest";

const original = process.env.TALLY_ENCRYPTION_KEY!;
const useKeys = (current: string, old: string[] = []) => {
  process.env.TALLY_ENCRYPTION_KEY = current;
  process.env.TALLY_ENCRYPTION_KEYS = old.join(",");
  resetConfigForTests();
  forgetEncryptionKeys();
  forgetEndpoints();
};
afterEach(() => useKeys(original));

/** Everything the database holds about secrets, as someone reading it directly would see it. */
async function rawRows(): Promise<string> {
  const c = new pg.Client({ connectionString: databaseUrl() });
  await c.connect();
  try {
    const secrets = await c.query("SELECT secret FROM endpoint_secrets");
    const endpoints = await c.query("SELECT settings::text FROM provider_endpoints");
    const audit = await c.query("SELECT details::text FROM audit_log");
    return JSON.stringify([secrets.rows, endpoints.rows, audit.rows]);
  } finally {
    await c.end();
  }
}

describe("secrets at rest", () => {
  it("the database never holds a signing secret or an API key in the clear, and webhooks still verify", async () => {
    const tenant = await aTenant();
    const apiKey = `sk_test_${randomBytes(16).toString("hex")}`;
    expect(
      (
        await updateEndpointSettings(
          tenant.slug,
          "stripe",
          { settings: { apiKey, apiBaseUrl: "http://127.0.0.1:1" } },
          SYSTEM_ACTOR,
        )
      ).ok,
    ).toBe(true);
    const raw = await rawRows();
    expect(raw).not.toContain(tenant.stripeSecret);
    expect(raw).not.toContain(tenant.standardSecret);
    expect(raw).not.toContain(apiKey);
    expect(raw).not.toContain(apiKey.slice(8)); // not even the random part
    expect(raw).toContain("http://127.0.0.1:1"); // settings that are not credentials stay readable
    expect((await deliver(stripeRequest(tenant, aStripePayment()))).status).toBe(200);
  });

  it("a row stored in plaintext before encryption is sealed by the migration's data step, once, and still verifies", async () => {
    const tenant = await aTenant();
    const legacy = generateSecret("stripe");
    const endpoint = await prisma.providerEndpoint.findUniqueOrThrow({
      where: { tenantId_provider: { tenantId: tenant.id, provider: "stripe" } },
    });
    const c = new pg.Client({ connectionString: databaseUrl() });
    await c.connect();
    await c.query("INSERT INTO endpoint_secrets (endpoint_id, secret) VALUES ($1, $2)", [endpoint.id, legacy]);
    await c.query(`UPDATE provider_endpoints SET settings = '{"apiKey":"sk_test_legacy_plain_key"}' WHERE id = $1`, [
      endpoint.id,
    ]);
    await c.end();
    expect(await rawRows()).toContain(legacy);
    const first = await sealPlaintextSecrets();
    expect(first).toMatchObject({ secrets: 1, endpoints: 1 });
    expect(await sealPlaintextSecrets()).toMatchObject({ secrets: 0, endpoints: 0 });
    const raw = await rawRows();
    expect(raw).not.toContain(legacy);
    expect(raw).not.toContain("sk_test_legacy_plain_key");
    forgetEndpoints();
    expect((await deliver(stripeRequest(tenant, aStripePayment(), { secret: legacy }))).status).toBe(200);
  });

  it("a wrong key fails loudly at start naming the key; rotation re-seals everything and webhooks keep verifying", async () => {
    const tenant = await aTenant();
    const next = randomBytes(32).toString("base64");
    useKeys(next);
    await expect(checkEncryptionKeys()).rejects.toThrow(
      /sealed under encryption key [0-9a-f]{8}, which neither TALLY_ENCRYPTION_KEY \(key [0-9a-f]{8}\) nor TALLY_ENCRYPTION_KEYS provides/,
    );
    expect((await deliver(stripeRequest(tenant, aStripePayment()))).status).toBe(500);

    useKeys(next, [original]);
    await checkEncryptionKeys();
    const r = await rotateEncryptionKey(SYSTEM_ACTOR);
    expect(r.secrets).toBeGreaterThanOrEqual(2);
    expect(
      (await prisma.auditLog.findFirstOrThrow({ where: { action: "secrets.rotate_key" }, orderBy: { id: "desc" } }))
        .subjectId,
    ).toBe(r.toKey);

    useKeys(next); // the old key is gone
    expect((await checkEncryptionKeys()).keyIds).toEqual([r.toKey]);
    expect((await deliver(stripeRequest(tenant, aStripePayment()))).status).toBe(200);
    useKeys("not a key");
    await expect(checkEncryptionKeys()).rejects.toThrow("TALLY_ENCRYPTION_KEY must be 32 bytes");
  });

  it("the embedded default makes one key file, readable by its owner only, and reuses it", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tally-key-"));
    const key = keyFileFor(dir);
    expect(Buffer.from(key, "base64")).toHaveLength(32);
    expect(statSync(path.join(dir, "encryption.key")).mode & 0o777).toBe(0o600);
    expect(keyFileFor(dir)).toBe(key);
    expect(readFileSync(path.join(dir, "encryption.key"), "utf8").trim()).toBe(key);
  });
});
