// Period exports from the dashboard (issue #21.7): the Export form on the audit,
// cases and reconciliation pages downloads the period's CSV with the session's
// cookie; what arrives is the export's header and rows of this tenant.
import { expect, test } from "@playwright/test";
import { demo, demoUser, signInPage } from "./support";

const t = () => demo().tenant;

for (const [section, kind, what, header] of [
  ["audit", "audit", "the audit log", "id,at,actor_type,actor,action,subject_type,subject_id,reason,details"],
  ["cases", "cases", "cases", "id,kind,kind_label,status,status_label,in_period,provider,reference,assignee,opened_at"],
  ["reconciliation", "discrepancies", "discrepancies", "id,day,provider,reference,bucket,state,possible_timing"],
] as const) {
  test(`an accountant downloads ${what} for a period from the ${section} page`, async ({ page }) => {
    await signInPage(page, demoUser("accountant"), `/t/${t()}/${section}`);
    const form = page.getByRole("form", { name: `Export ${what} as CSV` });
    // The demo's history reaches back 90 days: a period that surely holds rows.
    const from = new Date(Date.now() - 100 * 86_400_000).toISOString().slice(0, 10);
    await form.getByLabel("Export from").fill(from);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      form.getByRole("button", { name: `Export ${what} (CSV)` }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(new RegExp(`^${kind}-${t()}-${from}-to-\\d{4}-\\d{2}-\\d{2}\\.csv$`));
    const text = await (await download.createReadStream()).toArray().then((c) => Buffer.concat(c).toString("utf8"));
    expect(text.startsWith(header)).toBe(true);
    expect(text.trim().split("\n").length).toBeGreaterThan(1);
  });
}
