// Shared e2e helpers: the demo credentials the product wrote, sign-in through
// the page or the API, and signed webhook deliveries.
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, request as playwrightRequest, type APIRequestContext, type Page } from "@playwright/test";

export type DemoCredentials = {
  tenant: string;
  secrets: { stripe: string; standard: string };
  users: { email: string; role: string; password: string }[];
};

export const dataDir = () => process.env.TALLY_E2E_DIR!;
export const baseURL = () => `http://localhost:${process.env.TALLY_E2E_PORT}`;

/** What workers/start.ts wrote next to the embedded database folder (dev/demo.ts). */
export function demo(): DemoCredentials {
  return JSON.parse(readFileSync(path.join(dataDir(), "demo-credentials.json"), "utf8"));
}

export function demoUser(role: "admin" | "ops" | "accountant"): { email: string; password: string } {
  const u = demo().users.find((x) => x.role === role);
  if (!u) throw new Error(`no demo ${role}`);
  return u;
}

export async function signInPage(page: Page, user: { email: string; password: string }, next?: string): Promise<void> {
  await page.goto(next ? `/login?next=${encodeURIComponent(next)}` : "/login");
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-user")).toBeVisible();
}

export type ApiSession = {
  api: APIRequestContext;
  csrf: string;
  call: (method: string, url: string, body?: unknown) => Promise<{ status: number; json: unknown }>;
};

/** A signed-in API client: cookie kept by the context, CSRF token and Origin sent on every call. */
export async function signInApi(user: { email: string; password: string }): Promise<ApiSession> {
  const api = await playwrightRequest.newContext({ baseURL: baseURL(), extraHTTPHeaders: { origin: baseURL() } });
  const login = await api.post("/api/auth/login", { data: { email: user.email, password: user.password } });
  expect(login.status(), await login.text()).toBe(200);
  const session = (await (await api.get("/api/auth/session")).json()) as { csrfToken: string };
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await api.fetch(url, {
      method,
      headers: { "x-csrf-token": session.csrfToken },
      ...(body !== undefined && { data: body }),
    });
    return { status: res.status(), json: await res.json().catch(() => null) };
  };
  return { api, csrf: session.csrfToken, call };
}

/** Signs a body the way Stripe does (t=…,v1=HMAC-SHA256 of "t.body"). */
export function stripeSignature(body: Buffer, secret: string): string {
  const t = Math.floor(Date.now() / 1000);
  const mac = createHmac("sha256", secret)
    .update(Buffer.concat([Buffer.from(`${t}.`), body]))
    .digest("hex");
  return `t=${t},v1=${mac}`;
}

/** Standard Webhooks headers: v1 = base64 HMAC-SHA256 of "id.timestamp.body" under the base64 secret. */
export function standardHeaders(body: Buffer, secret: string, id: string): Record<string, string> {
  const ts = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const mac = createHmac("sha256", key)
    .update(Buffer.concat([Buffer.from(`${id}.${ts}.`), body]))
    .digest("base64");
  return { "webhook-id": id, "webhook-timestamp": ts, "webhook-signature": `v1,${mac}` };
}

export const unique = (prefix: string) =>
  `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** The page's own error and status messages (Next.js adds an empty route announcer with role=alert too). */
export const alertOf = (page: Page) => page.locator("p[role=alert]");

export const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join("e2e", ".artifacts", `${name}.png`), fullPage: true });

/** A Stripe payment_intent.succeeded event for `reference`, created now. */
export function stripePayment(reference: string, o: { amount?: number; currency?: string; account?: string } = {}) {
  const now = Math.floor(Date.now() / 1000);
  const amount = o.amount ?? 1250;
  return {
    id: unique("evt_"),
    object: "event",
    type: "payment_intent.succeeded",
    created: now,
    data: {
      object: {
        id: reference,
        object: "payment_intent",
        amount,
        amount_received: amount,
        currency: o.currency ?? "usd",
        customer: null,
        metadata: { account: o.account ?? "acct_e2e" },
        created: now,
      },
    },
  };
}

/** Delivers `event` to the demo tenant's Stripe endpoint, signed with its secret; expects 200. */
export async function sendStripe(request: APIRequestContext, event: object): Promise<void> {
  const body = Buffer.from(JSON.stringify(event));
  const res = await request.post(`/api/webhooks/${demo().tenant}/stripe`, {
    data: body,
    headers: { "content-type": "application/json", "stripe-signature": stripeSignature(body, demo().secrets.stripe) },
  });
  expect(res.status()).toBe(200);
}
