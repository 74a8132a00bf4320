import { expect, test } from "@playwright/test";
import { demo, demoUser, shot, signInApi, signInPage, unique } from "./support";

test("an admin creates a user; the password is shown once and works", async ({ page }) => {
  await signInPage(page, demoUser("admin"));
  await page.goto(`/t/${demo().tenant}/admin`);
  const email = `${unique("new")}@demo.tally`;
  const form = page.getByRole("form", { name: "Create a user" });
  await form.getByLabel("Email").fill(email);
  await form.getByLabel("Role").selectOption("accountant");
  await form.getByLabel(demo().tenant).check();
  await form.getByRole("button", { name: "Create user" }).click();
  const shown = page.getByTestId("shown-once");
  await expect(shown).toBeVisible();
  const password = (await shown.textContent())!.trim();
  expect(password).toMatch(/^\w{4}-\w{4}-\w{4}-\w{4}$/);
  await shot(page, "admin-user-created");
  await expect(page.getByRole("cell", { name: email })).toBeVisible();
  await page.reload();
  await expect(page.getByTestId("shown-once")).toHaveCount(0);
  expect(await page.content()).not.toContain(password);
  const session = await signInApi({ email, password });
  expect((await session.call("GET", `/api/v1/tenants/${demo().tenant}/accounts`)).status).toBe(200);
});

test("rotating a secret shows the new secret once and lists only its fingerprint", async ({ page }) => {
  await signInPage(page, demoUser("admin"));
  await page.goto(`/t/${demo().tenant}/admin`);
  const form = page.getByRole("form", { name: "Add or rotate a secret" });
  await form.getByRole("combobox", { name: /^Provider/ }).selectOption("stripe");
  const label = unique("rotation-");
  await form.getByLabel("Label").fill(label);
  await form.getByLabel("rotate: let them expire after").check();
  await form.getByLabel("Overlap hours").fill("2");
  await form.getByRole("button", { name: "Save secret" }).click();
  const shown = page.getByTestId("shown-once");
  await expect(shown).toBeVisible();
  const secret = (await shown.textContent())!.trim();
  expect(secret).toMatch(/^whsec_/);
  await expect(page.locator(".shown-once")).toContainText("older secret(s) now expire after the overlap");
  await expect(page.getByRole("row", { name: new RegExp(label) })).toContainText("active");
  await shot(page, "admin-secret-rotated");
  await page.getByRole("button", { name: "I have copied it" }).click();
  await page.reload();
  expect(await page.content()).not.toContain(secret);
  // The old demo secret is now expiring, not revoked.
  const stripePanel = page.locator(".panel", { hasText: `/api/webhooks/${demo().tenant}/stripe` });
  await expect(stripePanel.getByRole("row", { name: /^demo/ })).toContainText("expiring");
});

test("an admin changes the tenant's retention of raw bodies, saying why, and the audit log has it", async ({
  page,
}) => {
  await signInPage(page, demoUser("admin"));
  await page.goto(`/t/${demo().tenant}/admin`);
  await expect(page.getByTestId("retention-now")).toContainText("400 days");
  const form = page.getByRole("form", { name: "Change the retention of raw bodies" });
  await form.getByLabel("Days (30 to 36500)").fill("3650");
  const reason = unique("auditors ask for ten years ");
  await form.getByLabel("Why").fill(reason);
  await form.getByRole("button", { name: "Change retention" }).click();
  await expect(page.getByTestId("retention-now")).toContainText("3650 days");
  await shot(page, "admin-retention");
  await page.reload();
  await expect(page.getByTestId("retention-now")).toContainText("3650 days");
  const session = await signInApi(demoUser("admin"));
  const audit = await session.call("GET", `/api/v1/tenants/${demo().tenant}/audit?action=tenant.retention`);
  expect(audit.status).toBe(200);
  expect(JSON.stringify(audit.json)).toContain(reason);
  // Back as it was, so other journeys see the default; a retention below 30 days is refused by name.
  expect(
    (await session.call("PATCH", `/api/v1/tenants/${demo().tenant}`, { rawBodyRetentionDays: 7, reason: "x" })).json,
  ).toMatchObject({ error: { code: "invalid_input", message: expect.stringContaining("rawBodyRetentionDays") } });
  expect(
    (await session.call("PATCH", `/api/v1/tenants/${demo().tenant}`, { rawBodyRetentionDays: 400, reason: "restore" }))
      .status,
  ).toBe(200);
});
