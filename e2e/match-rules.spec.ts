// An admin sets an endpoint's matching rules on the admin page (#20.5): saved, shown
// again after a reload, audited with the reason; a tolerance that is not whole minor
// units is refused with the server's own message, and nothing changes.
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { demo, demoUser, shot, signInApi, signInPage, unique } from "./support";

// The demo's Standard Webhooks endpoint: no journey reconciles it, and it is put back after.
const PROVIDER = "standard";
type Rules = { enabled: boolean; toleranceSeconds: number; matchRules: Record<string, unknown> };
let before: Rules | null = null;

test.afterAll(async () => {
  if (!before) return;
  const admin = await signInApi(demoUser("admin"));
  const { enabled, toleranceSeconds, matchRules } = before;
  const restored = await admin.call("PATCH", `/api/v1/tenants/${demo().tenant}/endpoints/${PROVIDER}`, {
    enabled,
    toleranceSeconds,
    matchRules,
    reason: "e2e: back as it was",
  });
  expect(restored.status).toBe(200);
  await admin.api.dispose();
});

test("an admin sets the tolerance to 5 minor units and the lag to 2 days, sees them after a reload, and a refusal shows its message", async ({
  page,
}) => {
  const admin = await signInApi(demoUser("admin"));
  const listed = (await admin.call("GET", `/api/v1/tenants/${demo().tenant}/endpoints`)).json as {
    endpoints: (Rules & { provider: string })[];
  };
  before = listed.endpoints.find((e) => e.provider === PROVIDER) ?? null;
  expect(before, `the demo tenant has a ${PROVIDER} endpoint`).not.toBeNull();

  await signInPage(page, demoUser("admin"));
  await page.goto(`/t/${demo().tenant}/admin`);
  const form = page.getByRole("form", { name: `Matching rules for ${PROVIDER}` });
  await form.getByLabel("Amount tolerance (minor units)").fill("5");
  await form.getByLabel("Bank date lag (days)").fill("2");
  const reason = unique("the acquirer rounds to 5 cents ");
  await form.getByLabel("Why (for the audit log)").fill(reason);
  await form.getByRole("button", { name: "Save matching rules" }).click();
  await expect(form.getByRole("status")).toContainText("within 5 minor units, 2 days' lag");
  await shot(page, "admin-match-rules");
  const axe = await new AxeBuilder({ page }).include("[aria-labelledby=match-rules-h]").analyze();
  expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);

  await page.reload();
  await expect(form.getByLabel("Amount tolerance (minor units)")).toHaveValue("5");
  await expect(form.getByLabel("Bank date lag (days)")).toHaveValue("2");

  // A tolerance typed in major units is not whole minor units: the server says so, and nothing is saved.
  await form.getByLabel("Amount tolerance (minor units)").fill("0.05");
  await form.getByRole("button", { name: "Save matching rules" }).click();
  await expect(form.locator("p[role=alert]")).toContainText(
    'a whole number of minor units (5 is 0.05 in a two-decimal currency), got "0.05"',
  );
  await page.reload();
  await expect(form.getByLabel("Amount tolerance (minor units)")).toHaveValue("5");

  const audit = await admin.call("GET", `/api/v1/tenants/${demo().tenant}/audit?action=endpoint.update`);
  expect(audit.status).toBe(200);
  const entries = (audit.json as { entries: { reason: string | null; details: unknown }[] }).entries;
  expect(entries.find((e) => e.reason === reason)).toMatchObject({
    details: { provider: PROVIDER, changed: { matchToleranceMinor: { to: "5" }, matchDateLagDays: { to: 2 } } },
  });
  await admin.api.dispose();
});
