// Refused deliveries as ops read them over HTTP: the real route with a signed-in person's
// session, deliveries refused through the real webhook route, one tenant's never another's.
import { describe, expect, it } from "vitest";
import { GET } from "@/app/api/v1/tenants/[tenant]/refused-deliveries/route";
import { aStripePayment, aTenant, stripeRequest, unique, type TestTenant } from "@/dev/testing/builders";
import { deliver } from "@/dev/testing/route";
import { SESSION_COOKIE } from "@/lib/auth/cookies";
import { createSession } from "@/lib/auth/sessions";
import type { Role } from "@/lib/generated/prisma/enums";
import { prisma } from "@/lib/platform/db";

async function get(tenant: TestTenant, query = "", role: Role = "ops") {
  const u = await prisma.user.create({ data: { email: `${unique(role)}@refused.test`, role } });
  await prisma.tenantMember.create({ data: { userId: u.id, tenantId: tenant.id } });
  const { cookieValue } = await prisma.$transaction((tx) => createSession(tx, u.id));
  const res = await GET(
    new Request(`http://tally.test/api/v1/tenants/${tenant.slug}/refused-deliveries${query}`, {
      headers: { cookie: `${SESSION_COOKIE}=${cookieValue}` },
    }),
    { params: Promise.resolve({ tenant: tenant.slug }) },
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("GET /api/v1/tenants/{tenant}/refused-deliveries", () => {
  it("lists the tenant's refused deliveries newest first with why, filtered by text in the body, paged", async () => {
    const [t, other] = [await aTenant(), await aTenant()];
    for (const ref of ["pi_refusedList01", "pi_refusedList02", "pi_refusedList03"])
      expect((await deliver(stripeRequest(t, aStripePayment({ reference: ref }), { secret: "whsec_x" }))).status).toBe(
        401,
      );
    expect((await deliver(stripeRequest(other, aStripePayment(), { secret: "whsec_y" }))).status).toBe(401);

    const all = await get(t);
    expect(all.status).toBe(200);
    const items = all.body.items as { reason: string; hint: string; preview: string; provider: string }[];
    expect(items).toHaveLength(3);
    expect(items[0]).toMatchObject({ provider: "stripe", reason: "no_signature_matched", hint: "wrong_secret" });
    expect(items[0]!.preview).toContain("pi_refusedList03");

    const one = await get(t, "?reference=pi_refusedList02");
    expect((one.body.items as { preview: string }[]).map((i) => i.preview.includes("pi_refusedList02"))).toEqual([
      true,
    ]);

    const first = await get(t, "?limit=2");
    expect(first.body.items).toHaveLength(2);
    const second = await get(t, `?limit=2&before=${first.body.nextBefore}`);
    expect((second.body.items as { preview: string }[])[0]!.preview).toContain("pi_refusedList01");
    expect(second.body.nextBefore).toBeNull();
  });

  it("refuses a bad filter with a 400 naming it", async () => {
    const t = await aTenant();
    const r = await get(t, "?provider=bitcoin");
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain("provider");
  });
});
