// What an attacker or a careless client puts in a path or a query string must
// come back as a 4xx that says what is wrong, never a 500: through the real
// route handlers, called as Next.js calls them (params already decoded).
import { beforeAll, describe, expect, it } from "vitest";
import { NextRequest } from "next/server";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { createApiToken } from "@/lib/auth/api-tokens";
import { aTenant, type TestTenant } from "@/dev/testing/builders";
import { GET as events } from "@/app/api/v1/tenants/[tenant]/events/route";
import { GET as event } from "@/app/api/v1/tenants/[tenant]/events/[id]/route";
import { GET as audit } from "@/app/api/v1/tenants/[tenant]/audit/route";
import { GET as discrepancies } from "@/app/api/v1/tenants/[tenant]/discrepancies/route";
import { POST as startRun } from "@/app/api/v1/tenants/[tenant]/reconciliation/runs/route";
import { GET as account } from "@/app/api/v1/tenants/[tenant]/accounts/[id]/route";
import { proxy } from "@/proxy";

let tenant: TestTenant;
let token: string;
beforeAll(async () => {
  tenant = await aTenant();
  const t = await createApiToken({ tenant: tenant.slug, role: "admin" }, SYSTEM_ACTOR);
  if (!t.ok) throw new Error(t.message);
  token = t.value.token;
});

type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;
const call = (handler: Handler, params: Record<string, string>, query = "", init: RequestInit = {}) =>
  handler(
    new Request(`http://tally.test/api/v1/x${query}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers },
    }),
    { params: Promise.resolve(params) },
  );
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

describe("a tenant slug that cannot be one", () => {
  const hostile = [
    "acme\u0000",
    `${"a".repeat(10_000)}`,
    "ACME",
    "a b",
    "../acme",
    "acme\u0000'; DROP TABLE tenants; --",
    "%C0%AE",
    "\u00e9t\u00e9",
  ];

  it("is a 404 naming no tenant, before any query, on every kind of route", async () => {
    for (const slug of [...hostile, `${tenant.slug}\u0000`]) {
      for (const res of [
        await call(events, { tenant: slug }),
        await call(event, { tenant: slug, id: "1" }),
        await call(audit, { tenant: slug }),
      ]) {
        expect({ slug: slug.slice(0, 40), status: res.status }).toEqual({ slug: slug.slice(0, 40), status: 404 });
        const error = await errorOf(res);
        expect(error.code).toBe("unknown_tenant");
        expect(error.message.length).toBeLessThan(250);
      }
    }
  });

  it("still answers 401 first to a caller who is not signed in", async () => {
    const res = await events(new Request("http://tally.test/api/v1/x"), {
      params: Promise.resolve({ tenant: "acme\u0000" }),
    });
    expect(res.status).toBe(401);
  });
});

describe("a date that is not a calendar date", () => {
  it("is a 400 naming the field on the events, audit and discrepancies queries", async () => {
    const cases: [Handler, string, string][] = [
      [events, "?from=2026-13-45", "from"],
      [events, "?to=2026-02-30", "to"],
      [events, "?from=2026-12-01T25:00:00Z", "from"],
      [events, "?from=yesterday", "from"],
      [audit, "?to=2025-02-29", "to"],
      [audit, "?from=%00", "from"],
      [discrepancies, "?from=2026-13-45", "from"],
      [discrepancies, "?to=2026-02-30", "to"],
    ];
    for (const [handler, query, field] of cases) {
      const res = await call(handler, { tenant: tenant.slug }, query);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      const error = await errorOf(res);
      expect(error.code).toBe("invalid_input");
      expect(error.message).toMatch(new RegExp(`^${field}: `));
    }
  });

  it("is a 400 in a reconciliation run's window, not a window that rolls over into March", async () => {
    const res = await call(startRun, { tenant: tenant.slug }, "", {
      method: "POST",
      body: JSON.stringify({ provider: "stripe", from: "2026-02-30" }),
      headers: { origin: "http://tally.test" },
    });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toMatch(/^from: must be a calendar date/);
  });

  it("still accepts real days, leap days and ISO instants", async () => {
    for (const query of [
      "?from=2024-02-29&to=2026-12-01",
      "?from=2026-12-01T10:00:00Z",
      "?from=2026-12-01T10:00:00%2B02:00",
    ]) {
      expect((await call(events, { tenant: tenant.slug }, query)).status).toBe(200);
    }
  });
});

describe("a path id that is not a whole number", () => {
  it("is a 400 naming the parameter", async () => {
    for (const id of ["abc", "1e30", "-1", "0", "9".repeat(40), "1\u0000"]) {
      const res = await call(account, { tenant: tenant.slug, id });
      expect({ id, status: res.status }).toEqual({ id, status: 400 });
      expect((await errorOf(res)).message).toBe("id: must be a positive whole number");
    }
    // 19 digits: raw event ids are that long (ms << 20); one past bigint's range is refused by name.
    const past = await call(account, { tenant: tenant.slug, id: "9223372036854775808" });
    expect(past.status).toBe(400);
    expect((await errorOf(past)).message).toBe("id: must be at most 9223372036854775807");
    expect((await call(account, { tenant: tenant.slug, id: "9223372036854775807" })).status).toBe(404);
  });
});

describe("percent-encoding that is not UTF-8", () => {
  it("is answered 400 by the proxy, before Next.js fails to decode it into params", async () => {
    for (const path of [
      "/api/webhooks/%C0%AE/stripe",
      "/api/webhooks/acme%E2%82/stripe",
      "/api/v1/tenants/%ZZ/events",
      "/api/webhooks/acme/%C0",
    ]) {
      const res = proxy(new NextRequest(`http://tally.test${path}`));
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect((await errorOf(res)).code).toBe("malformed_path");
    }
  });

  it("lets well-formed escapes through to the route", () => {
    for (const path of [
      "/api/webhooks/acme%00/stripe",
      "/api/webhooks/ac%41me/stripe",
      "/api/v1/tenants/acme/events",
    ]) {
      expect(proxy(new NextRequest(`http://tally.test${path}`)).headers.get("x-middleware-next")).toBe("1");
    }
  });
});
