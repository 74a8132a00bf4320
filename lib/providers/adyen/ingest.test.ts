import { beforeAll, describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { metrics } from "@/lib/platform/metrics";
import { aTenant, webhookRequest, type TestTenant } from "@/dev/testing/builders";
import { anAdyenBatch, anAdyenItem, anEndpoint, signedByAdyen } from "@/dev/testing/provider-builders";
import { drain } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";

let tenant: TestTenant;
let key: string;
beforeAll(async () => {
  tenant = await aTenant();
  key = await anEndpoint(tenant, "adyen");
});

const stored = () => prisma.rawEvent.count({ where: { tenantId: tenant.id, provider: "adyen" } });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;
const rejected = async (reason: string, hint?: string) =>
  (await metrics().webhooksRejected.get()).values
    .filter(
      (v) =>
        v.labels.provider === "adyen" && v.labels.reason === reason && (hint === undefined || v.labels.hint === hint),
    )
    .reduce((s, v) => s + v.value, 0);
const post = (body: string) => deliver(webhookRequest(tenant.slug, "adyen", body, {}));

describe("an Adyen item's account (issue #17 item 2)", () => {
  it("comes from the signed merchantReference: rewriting unsigned additionalData still verifies, and credits no one new", async () => {
    const signed = signedByAdyen(anAdyenItem({ merchantReference: "acct_alice/order-mallory-test", value: 4200 }), key);
    // Outside the HMAC: the signature still verifies after this (the attack is real).
    const rewritten = {
      ...signed,
      additionalData: {
        ...(signed.additionalData as object),
        "metadata.account": "acct_mallory",
        shopperReference: "acct_mallory",
      },
    };
    const res = await post(JSON.stringify(anAdyenBatch([rewritten])));
    expect(res.status).toBe(200);
    await drain();
    const posting = await prisma.posting.findFirstOrThrow({
      where: { tenantId: tenant.id, providerReference: signed.pspReference as string },
      include: { entries: { include: { account: true } } },
    });
    expect(posting.entries.map((e) => `${e.account.code} ${e.amount}`).sort()).toEqual([
      "clearing:adyen 4200",
      "customer:acct_alice -4200",
    ]);
    expect(await prisma.account.count({ where: { tenantId: tenant.id, code: "customer:acct_mallory" } })).toBe(0);
  });
});

describe("POST /api/webhooks/{tenant}/adyen", () => {
  it("stores a signed batch byte for byte and answers exactly [accepted]", async () => {
    const batch = anAdyenBatch([
      signedByAdyen(anAdyenItem(), key),
      signedByAdyen(anAdyenItem({ eventCode: "REFUND", originalReference: "8816178952380553", value: 300 }), key),
    ]);
    const body = JSON.stringify(batch, null, 1).replace("TallyTestMerchant", "Tally\\u0054estMerchant"); // odd bytes: no re-serialisation may sneak in
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("[accepted]");
    expect(res.headers.get("content-type")).toBe("text/plain");
    const row = await prisma.rawEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, provider: "adyen" },
      orderBy: { id: "desc" },
    });
    expect(Buffer.from(row.rawBody!).equals(Buffer.from(body))).toBe(true);
    expect(row).toMatchObject({ status: "RECEIVED", deliveryId: null });
  });

  it("refuses a batch with one forged item entirely: 401 naming the item, nothing stored", async () => {
    const before = await stored();
    const counted = await rejected("no_signature_matched", "payload_altered");
    const forged = {
      ...signedByAdyen(anAdyenItem({ pspReference: "FORGED0000000001" }), key),
      amount: { value: 999_999, currency: "EUR" },
    };
    const res = await post(JSON.stringify(anAdyenBatch([signedByAdyen(anAdyenItem(), key), forged])));
    expect(res.status).toBe(401);
    const error = await errorOf(res);
    expect(error.code).toBe("no_signature_matched");
    expect(error.message).toMatch(
      /^notificationItems\[1\] \(pspReference FORGED0000000001\) failed HMAC verification .*\(1 of 2 items failed\); the whole batch was refused and nothing stored/,
    );
    expect(error.message).toMatch(/\(hint: payload_altered\)$/);
    expect(await stored()).toBe(before);
    expect(await rejected("no_signature_matched", "payload_altered")).toBe(counted + 1);
  });

  describe("refuses bad signatures with 401, storing nothing", () => {
    const cases: [string, () => string, string, string][] = [
      [
        "another key",
        () =>
          JSON.stringify(
            anAdyenBatch([
              signedByAdyen(anAdyenItem(), "FFEEDDCCBBAA99887766554433221100FFEEDDCCBBAA99887766554433221100"),
            ]),
          ),
        "no_signature_matched",
        "failed HMAC verification against every active HMAC key",
      ],
      [
        "tampered amount",
        () =>
          JSON.stringify(
            anAdyenBatch([
              { ...signedByAdyen(anAdyenItem({ value: 100 }), key), amount: { value: 10000, currency: "EUR" } },
            ]),
          ),
        "no_signature_matched",
        "(1 of 1 item failed)",
      ],
      [
        "missing hmacSignature",
        () => JSON.stringify(anAdyenBatch([anAdyenItem({ pspReference: "UNSIGNED00000001" })])),
        "missing_signature",
        "(pspReference UNSIGNED00000001) has no additionalData.hmacSignature",
      ],
      ["not a batch", () => "live=false&eventCode=AUTHORISATION", "malformed_body", "Body is not JSON"],
    ];
    for (const [name, body, reason, message] of cases) {
      it(name, async () => {
        const before = await stored();
        const res = await post(body());
        expect(res.status).toBe(401);
        const error = await errorOf(res);
        expect(error).toMatchObject({ code: reason, message: expect.stringContaining(message) });
        expect(await stored()).toBe(before);
      });
    }
  });
});
