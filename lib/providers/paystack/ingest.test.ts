import { beforeAll, describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { aTenant, webhookRequest, type TestTenant } from "@/dev/testing/builders";
import { aPaystackCharge, anEndpoint, paystackSignature } from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";

let tenant: TestTenant;
let secret: string;
beforeAll(async () => {
  tenant = await aTenant();
  secret = await anEndpoint(tenant, "paystack");
});

const stored = () => prisma.rawEvent.count({ where: { tenantId: tenant.id, provider: "paystack" } });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;
const post = (body: string, headers: Record<string, string>) =>
  deliver(webhookRequest(tenant.slug, "paystack", body, headers));

describe("POST /api/webhooks/{tenant}/paystack", () => {
  it("stores a signed charge.success byte for byte, with its signature header, and answers 200", async () => {
    const body = JSON.stringify(aPaystackCharge(), null, 3);
    const res = await post(body, { "x-paystack-signature": paystackSignature(body, secret) });
    expect(res.status).toBe(200);
    const row = await prisma.rawEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, provider: "paystack" },
      orderBy: { id: "desc" },
    });
    expect(Buffer.from(row.rawBody!).equals(Buffer.from(body))).toBe(true);
    expect(row.headers).toMatchObject({ "x-paystack-signature": paystackSignature(body, secret) });
  });

  describe("refuses bad signatures with 401, storing nothing", () => {
    const cases: [string, () => [string, Record<string, string>], string, string][] = [
      ["missing header", () => ["{}", {}], "missing_header", "Missing x-paystack-signature header"],
      [
        "tampered body",
        () => {
          const body = JSON.stringify(aPaystackCharge());
          return [body.replace("10000", "90000"), { "x-paystack-signature": paystackSignature(body, secret) }];
        },
        "no_signature_matched",
        "does not match the body under any active secret key",
      ],
      [
        "wrong key",
        () => {
          const body = JSON.stringify(aPaystackCharge());
          return [body, { "x-paystack-signature": paystackSignature(body, "sk_test_not_ours_at_all") }];
        },
        "no_signature_matched",
        "(hint: wrong_secret)",
      ],
      [
        "live event, test key",
        () => {
          const body = JSON.stringify(aPaystackCharge({ domain: "live" }));
          return [body, { "x-paystack-signature": paystackSignature(body, "sk_live_the_real_one") }];
        },
        "no_signature_matched",
        "live-mode event",
      ],
    ];
    for (const [name, request, reason, message] of cases) {
      it(name, async () => {
        const before = await stored();
        const [body, headers] = request();
        const res = await post(body, headers);
        expect(res.status).toBe(401);
        expect(await errorOf(res)).toMatchObject({ code: reason, message: expect.stringContaining(message) });
        expect(await stored()).toBe(before);
      });
    }
  });
});
