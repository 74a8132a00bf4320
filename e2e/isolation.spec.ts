// Tenant isolation, proven by walking every JSON API route and page found in
// the app directory, so a route added later is covered without editing this file.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, request as playwrightRequest, test } from "@playwright/test";
import { baseURL, dataDir, demo, demoUser, signInApi, signInPage, unique, type ApiSession } from "./support";

type Route = { pattern: string; methods: string[] };

function routesUnder(dir: string, urlPrefix: string): Route[] {
  const out: Route[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...routesUnder(p, `${urlPrefix}/${entry.name}`));
    else if (entry.name === "route.ts") {
      const source = readFileSync(p, "utf8");
      const methods = [
        ...source.matchAll(/export\s+(?:const|async\s+function|function)\s+(GET|POST|PUT|PATCH|DELETE)\b/g),
      ].map((m) => m[1]!);
      out.push({ pattern: urlPrefix, methods });
    } else if (entry.name === "page.tsx") out.push({ pattern: urlPrefix, methods: ["PAGE"] });
  }
  return out;
}

const apiRoutes = routesUnder(path.join("app", "api", "v1"), "/api/v1");
const tenantRoutes = apiRoutes.filter((r) => r.pattern.includes("[tenant]"));
const globalRoutes = apiRoutes.filter((r) => !r.pattern.includes("[tenant]"));
const pageRoutes = routesUnder(path.join("app", "t", "[tenant]"), "/t/[tenant]");

const fill = (pattern: string, tenant: string) =>
  pattern
    .replace("[tenant]", tenant)
    .replace("[provider]", "stripe")
    .replace(/\[id\]/g, "1");

let tenantB: string;
let accountantA: { email: string; password: string };
let asAccountantA: ApiSession;

test.beforeAll(async () => {
  expect(tenantRoutes.length).toBeGreaterThanOrEqual(9);
  const admin = await signInApi(demoUser("admin"));
  tenantB = unique("beta-");
  expect((await admin.call("POST", "/api/v1/tenants", { slug: tenantB, name: "Beta Secret Holdings" })).status).toBe(
    201,
  );
  // B gets a secret and a member of its own, so there is something to leak.
  expect((await admin.call("POST", `/api/v1/tenants/${tenantB}/endpoints/stripe/secrets`, { label: "b" })).status).toBe(
    201,
  );
  const email = `${unique("acct-a")}@demo.tally`;
  const created = await admin.call("POST", "/api/v1/users", { email, role: "accountant", tenants: [demo().tenant] });
  expect(created.status).toBe(201);
  accountantA = { email, password: (created.json as { password: string }).password };
  asAccountantA = await signInApi(accountantA);
});

test("A's accountant reads A but gets 404 on every /api/v1/tenants/B/… route and method", async () => {
  expect((await asAccountantA.call("GET", `/api/v1/tenants/${demo().tenant}/events`)).status).toBe(200);
  const seen: string[] = [];
  for (const route of tenantRoutes) {
    for (const method of route.methods) {
      const url = fill(route.pattern, tenantB);
      const res = await asAccountantA.call(
        method,
        url,
        method === "GET" ? undefined : { reason: "probe", label: "probe" },
      );
      seen.push(`${method} ${url} → ${res.status}`);
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(JSON.stringify(res.json)).not.toContain("Beta Secret Holdings");
    }
  }
  console.log(`  walked ${seen.length} tenant route/method pairs`);
});

test("A's accountant gets 403 from every admin route, and the tenant list hides B", async () => {
  for (const route of globalRoutes) {
    for (const method of route.methods) {
      const url = fill(route.pattern, tenantB);
      const res = await asAccountantA.call(
        method,
        url,
        method === "GET" ? undefined : { slug: unique("x-"), name: "x", email: "x@y.z", role: "admin" },
      );
      if (route.pattern === "/api/v1/tenants" && method === "GET") {
        expect(res.status).toBe(200);
        expect(JSON.stringify(res.json)).not.toContain(tenantB);
        continue;
      }
      expect(res.status, `${method} ${url}`).toBe(403);
    }
  }
});

test("an API token of tenant A gets 404 on every tenant B route and 403 on admin routes", async () => {
  const out = execFileSync(
    path.join("node_modules", ".bin", "tsx"),
    ["workers/tally.ts", "token", "add", "--tenant", demo().tenant, "--role", "admin"],
    {
      encoding: "utf8",
      env: {
        ...process.env,
        TALLY_DATA_DIR: path.join(dataDir(), "pg"),
        TALLY_PG_PORT: process.env.TALLY_E2E_PG_PORT!,
      },
    },
  );
  const token = /tly_[A-Za-z0-9_-]+/.exec(out)![0];
  const api = await playwrightRequest.newContext({
    baseURL: baseURL(),
    extraHTTPHeaders: { authorization: `Bearer ${token}` },
  });
  expect((await api.get(`/api/v1/tenants/${demo().tenant}/endpoints`)).status()).toBe(200);
  for (const route of tenantRoutes) {
    for (const method of route.methods) {
      const url = fill(route.pattern, tenantB);
      const res = await api.fetch(url, { method, ...(method !== "GET" && { data: { reason: "probe" } }) });
      expect(res.status(), `${method} ${url}`).toBe(404);
    }
  }
  for (const route of globalRoutes) {
    for (const method of route.methods.filter((m) => !(route.pattern === "/api/v1/tenants" && m === "GET"))) {
      const res = await api.fetch(fill(route.pattern, tenantB), { method, ...(method !== "GET" && { data: {} }) });
      expect(res.status(), `${method} ${route.pattern}`).toBe(403);
    }
  }
  // Without credentials: 401 everywhere.
  const anonymous = await playwrightRequest.newContext({ baseURL: baseURL() });
  for (const route of tenantRoutes)
    expect((await anonymous.get(fill(route.pattern, demo().tenant))).status()).toBe(
      route.methods.includes("GET") ? 401 : 405,
    );
});

test("A's accountant gets the 404 page on every page of tenant B", async ({ page }) => {
  await signInPage(page, accountantA);
  expect(pageRoutes.length).toBeGreaterThanOrEqual(8);
  for (const route of pageRoutes) {
    const url = fill(route.pattern, tenantB);
    const res = await page.goto(url);
    expect(res?.status(), url).toBe(404);
    await expect(page.getByText("Beta Secret Holdings")).toHaveCount(0);
  }
  await expect(page.getByRole("combobox", { name: "Tenant" })).toHaveCount(0);
});
