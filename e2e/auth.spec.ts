import { expect, test } from "@playwright/test";
import { alertOf, demo, demoUser, shot, signInPage, unique } from "./support";

const NAV_BY_ROLE: Record<string, string[]> = {
  ops: ["Overview", "Stuck claims", "Events", "Reconciliation", "Bank", "Audit log"],
  accountant: ["Overview", "Events", "Reconciliation", "Bank", "Cases", "Ledger", "Audit log"],
  admin: ["Overview", "Stuck claims", "Events", "Reconciliation", "Bank", "Cases", "Ledger", "Audit log", "Admin"],
};

for (const role of ["admin", "ops", "accountant"] as const) {
  test(`${role} signs in, sees only their sections, and signs out`, async ({ page }) => {
    const user = demoUser(role);
    await signInPage(page, user);
    await expect(page).toHaveURL(new RegExp(`/t/${demo().tenant}$`));
    const nav = page.getByRole("navigation", { name: "Sections" });
    await expect(nav.getByRole("link")).toHaveText(NAV_BY_ROLE[role]!);
    await shot(page, `overview-${role}`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/login$/);
    // The session is gone server-side: the shell sends us back to sign in.
    await page.goto(`/t/${demo().tenant}/events`);
    await expect(page).toHaveURL(/\/login\?next=/);
  });
}

test("the second accountant signs in too", async ({ page }) => {
  const b = demo().users.find((u) => u.email === "accountant.b@demo.tally")!;
  await signInPage(page, b);
  await expect(page.getByTestId("signed-in-user")).toHaveText("Bruno Accountant");
});

test("a role without a section sees why, not the data", async ({ page }) => {
  await signInPage(page, demoUser("ops"));
  await page.goto(`/t/${demo().tenant}/ledger`);
  await expect(page.getByRole("heading", { name: "Not available for your role" })).toBeVisible();
});

test("a wrong password says so without saying which part was wrong", async ({ page }) => {
  await page.goto("/login");
  await page.getByLabel("Email").fill(demoUser("ops").email);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(alertOf(page)).toHaveText("Wrong email or password");
  await shot(page, "login-wrong-password");
});

test("repeated failures for one email from one address are backed off with 429 and a retry time", async ({ page }) => {
  const email = `${unique("guess")}@demo.tally`;
  await page.goto("/login");
  for (let i = 0; i < 5; i++) {
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(`guess number ${i}`);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(alertOf(page)).toHaveText("Wrong email or password");
  }
  // The back-off starts at 2 s and doubles with each failure: on a slow machine the next
  // click may come after the first wait has passed, but not after the second and third.
  let status = 0;
  let retryAfter = 0;
  for (let i = 0; i < 3 && status !== 429; i++) {
    const answer = page.waitForResponse((r) => r.url().endsWith("/api/auth/login"));
    await page.getByRole("button", { name: "Sign in" }).click();
    const res = await answer;
    status = res.status();
    retryAfter = Number(res.headers()["retry-after"]);
  }
  expect(status).toBe(429);
  expect(retryAfter).toBeGreaterThan(0);
  await expect(alertOf(page)).toContainText("Too many failed sign-ins for this email from this address");
  await shot(page, "login-rate-limited");
});
