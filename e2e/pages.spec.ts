import { expect, test } from "@playwright/test";
import { demo, demoUser, shot, signInPage } from "./support";

test("the ledger page renders for an accountant, with an empty state or accounts", async ({ page }) => {
  await signInPage(page, demoUser("accountant"));
  await page.goto(`/t/${demo().tenant}/ledger`);
  await expect(page.getByRole("heading", { name: "Ledger", level: 1 })).toBeVisible();
  await expect(page.getByRole("table").or(page.getByRole("heading", { name: "No accounts yet" }))).toBeVisible();
  await shot(page, "ledger");
  const first = page.getByRole("table").getByRole("row").nth(1).getByRole("link");
  if (await first.count()) {
    await first.click();
    await expect(page.getByRole("heading", { name: "Entries" })).toBeVisible();
    await shot(page, "ledger-account");
  }
});

test("the audit log shows who did what, filterable, including sign-ins for admins", async ({ page }) => {
  await signInPage(page, demoUser("admin"));
  await page.goto(`/t/${demo().tenant}/audit`);
  await expect(page.getByRole("heading", { name: "Audit log", level: 1 })).toBeVisible();
  await expect(page.getByRole("cell", { name: "tenant.create" })).toBeVisible();
  const filters = page.getByRole("search", { name: "Filter the audit log" });
  await filters.getByLabel("Action starts with").fill("user.sign_in");
  await filters.getByLabel("Scope").selectOption("all");
  await filters.getByRole("button", { name: "Filter" }).click();
  await expect(page.getByRole("cell", { name: "user.sign_in" }).first()).toBeVisible();
  await expect(page.getByRole("cell", { name: /admin@demo\.tally/ }).first()).toBeVisible();
  await shot(page, "audit");
});

test("the stuck-claims, reconciliation and cases pages render for an admin", async ({ page }) => {
  await signInPage(page, demoUser("admin"));
  for (const [path, name] of [
    ["claims", "Stuck claims"],
    ["reconciliation", "Reconciliation"],
    ["cases", "Cases"],
  ]) {
    await page.goto(`/t/${demo().tenant}/${path}`);
    await expect(page.getByRole("heading", { name, level: 1 })).toBeVisible();
  }
});

test("the shell is keyboard-usable: skip link, then the nav in order", async ({ page }) => {
  await signInPage(page, demoUser("accountant"));
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
});
