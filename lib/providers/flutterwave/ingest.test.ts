import { beforeAll, describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { aTenant, webhookRequest, type TestTenant } from "@/dev/testing/builders";
import { aFlutterwaveCharge, anEndpoint } from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";

let tenant: TestTenant;
let secretHash: string;
beforeAll(async () => {
  tenant = await aTenant();
  secretHash = await anEndpoint(tenant, "flutterwave", { settings: { secretKey: "FLWSECK_TEST-abc-X" } });
});

const stored = () => prisma.rawEvent.count({ where: { tenantId: tenant.id, provider: "flutterwave" } });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;
const post = (body: string, headers: Record<string, string>) =>
  deliver(webhookRequest(tenant.slug, "flutterwave", body, headers));

describe("POST /api/webhooks/{tenant}/flutterwave", () => {
  it("stores a delivery with the right verif-hash byte for byte, without keeping the hash, and answers 200", async () => {
    const body = JSON.stringify(aFlutterwaveCharge(), null, 2);
    const res = await post(body, { "verif-hash": secretHash });
    expect(res.status).toBe(200);
    const row = await prisma.rawEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, provider: "flutterwave" },
      orderBy: { id: "desc" },
    });
    expect(Buffer.from(row.rawBody!).equals(Buffer.from(body))).toBe(true);
    expect(row.headers).not.toHaveProperty("verif-hash");
  });

  describe("refuses a bad verif-hash with 401, storing nothing", () => {
    const cases: [string, () => Record<string, string>, string, string][] = [
      ["missing header", () => ({}), "missing_header", "Missing verif-hash header"],
      [
        "wrong hash",
        () => ({ "verif-hash": "not-the-hash" }),
        "no_signature_matched",
        "verif-hash does not equal any active secret hash",
      ],
      [
        "hash with a character missing",
        () => ({ "verif-hash": secretHash.slice(1) }),
        "no_signature_matched",
        "(hint: wrong_secret)",
      ],
    ];
    for (const [name, headers, reason, message] of cases) {
      it(name, async () => {
        const before = await stored();
        const res = await post(JSON.stringify(aFlutterwaveCharge()), headers());
        expect(res.status).toBe(401);
        expect(await errorOf(res)).toMatchObject({ code: reason, message: expect.stringContaining(message) });
        expect(await stored()).toBe(before);
      });
    }
  });
});
