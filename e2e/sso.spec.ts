// Single sign-on in a real browser: Tally's sign-in page sends Chromium to a real OpenID
// provider (dev/oidc/provider.ts, started by playwright.config.ts), whose own login and
// consent pages are filled in; the provider sends it back and Tally opens a session
// whose role and tenant come from the ID token's groups.
import { expect, type Page, test } from "@playwright/test";
import { demo, shot } from "./support";

const ACCOUNTANT_NAV = ["Overview", "Events", "Reconciliation", "Bank", "Cases", "Ledger", "Audit log"];

async function throughProvider(page: Page, login: string) {
  await page.goto("/login");
  await page.getByRole("link", { name: "Sign in with Test IdP" }).click();
  // The provider's own pages, on its own origin.
  await expect(page).toHaveURL(new RegExp(`^http://127\\.0\\.0\\.1:${process.env.TALLY_E2E_OIDC_PORT}/`));
  await page.getByPlaceholder("Enter any login").fill(login);
  await page.getByPlaceholder("and password").fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await expect(page.getByRole("heading", { name: "Authorize" })).toBeVisible();
  await shot(page, "sso-consent");
  const back = page.waitForResponse((r) => r.url().includes("/api/auth/oidc/callback"));
  await page.getByRole("button", { name: "Continue" }).click();
  return back;
}

test("a person signs in through the identity provider's login and consent and lands with the mapped role", async ({
  page,
}) => {
  const callback = await throughProvider(page, "alice");
  expect(callback.status()).toBe(303);
  await expect(page).toHaveURL(new RegExp(`/t/${demo().tenant}$`));
  await expect(page.getByTestId("signed-in-user")).toHaveText("Alice Finance");
  await expect(page.getByRole("navigation", { name: "Sections" }).getByRole("link")).toHaveText(ACCOUNTANT_NAV);
  await shot(page, "sso-signed-in-accountant");
  // The same session a password sign-in opens: its CSRF token and the role checks behind it.
  const session = await (await page.request.get("/api/auth/session")).json();
  expect(session).toMatchObject({ user: { email: "alice@sso.test", role: "accountant" } });
  expect(session.csrfToken).toEqual(expect.any(String));
  await page.goto(`/t/${demo().tenant}/admin`);
  await expect(page.getByRole("heading", { name: "Not available for your role" })).toBeVisible();
});

test("a person whose groups map to no role is refused with a page that says so", async ({ page }) => {
  const callback = await throughProvider(page, "bob");
  expect(callback.status()).toBe(403);
  await expect(page.getByRole("heading", { name: "Sign-in refused" })).toBeVisible();
  await expect(page.getByRole("alert")).toContainText("None of your groups (everyone, contractors) is mapped");
  await shot(page, "sso-refused-unmapped");
  expect((await page.request.get("/api/auth/session")).status()).toBe(401);
});
