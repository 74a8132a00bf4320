// Bulk reprocessing as ops meet it (issue #21.3): on Events, filtered to failed
// events, "Reprocess all matching" counts what would go back, confirms that count
// with a reason, and the job's progress runs to done while the product's own
// worker takes the events; a payment already posted is not posted again, and the
// audit log names who and why.
// Accountants see no such action and the API refuses them.
import { expect, test } from "@playwright/test";
import { count, withDb } from "./db";
import { demo, demoUser, sendStripe, signInApi, signInPage, stripePayment, unique } from "./support";

const t = () => demo().tenant;

test("ops reprocess every failed event a filter matches, confirmed by count, with progress to done", async ({
  page,
  request,
}) => {
  test.setTimeout(120_000);
  const base = unique("pi_e2e_bulk_");
  const posted = [1, 2, 3].map((i) => `${base}_${i}`);
  for (const reference of posted) await sendStripe(request, stripePayment(reference, { amount: 4200 }));
  const matching = "movement_references && $1::text[]";
  const events = `FROM raw_events WHERE ${matching}`;
  await expect.poll(() => count(`SELECT count(*) AS n ${events} AND status = 'DONE'`, [posted])).toBe(3);
  // Marked failed as if the worker had given up after posting (what an outage mid-run
  // leaves to be sent back): their claims are DONE, so the reprocessing must find them
  // duplicates and post nothing again.
  await withDb((c) =>
    c.query(`UPDATE raw_events SET status = 'FAILED', last_error = 'worker gave up (e2e)' WHERE ${matching}`, [posted]),
  );

  await signInPage(page, demoUser("ops"), `/t/${t()}/events`);
  await page.getByLabel("Reference or delivery id").fill(base);
  await page.getByLabel("Status").selectOption("FAILED");
  await page.getByRole("button", { name: "Search" }).click();
  await page.getByRole("button", { name: "Reprocess all matching failed events…" }).click();
  const dialog = page.getByRole("dialog", { name: "Reprocess 3 events?" });
  await dialog.getByLabel("Reason").fill("the outage is over; sending the day's failures back");
  await dialog.getByRole("button", { name: "Reprocess 3 events" }).click();
  await expect(page.getByRole("status")).toContainText("3 events sent back to the worker");

  const jobs = page.getByRole("table", { name: "Recent bulk reprocessing, newest first" });
  const row = jobs.getByRole("row").nth(1);
  await expect(row.getByRole("cell").nth(1)).toHaveText(/done/, { timeout: 30_000 });
  // Finished 3 (duplicates of what was posted), failed again 0, waiting 0.
  await expect(row.getByRole("cell").nth(2)).toHaveText("3");
  await expect(row.getByRole("cell").nth(3)).toHaveText("0");
  await expect(row.getByRole("cell").nth(4)).toHaveText("0");
  await expect(row.getByRole("cell").nth(6)).toContainText("the outage is over");

  expect(await count(`SELECT count(*) AS n FROM postings WHERE provider_reference = ANY($1::text[])`, [posted])).toBe(
    3,
  );
  expect(await count(`SELECT count(*) AS n ${events} AND status = 'DUPLICATE'`, [posted])).toBe(3);
  expect(
    await count(
      `SELECT count(*) AS n FROM audit_log WHERE action = 'event.bulk_reprocess' AND actor_label = $1 AND reason = $2`,
      [demoUser("ops").email, "the outage is over; sending the day's failures back"],
    ),
  ).toBe(1);

  // Counted again now, nothing is eligible: no dialog, the person is told why.
  await page.getByRole("button", { name: "Reprocess all matching failed events…" }).click();
  await expect(page.locator("p[role=alert]")).toContainText("Nothing to reprocess");
  await expect(page.getByRole("dialog")).toHaveCount(0);
});

test("accountants have no bulk reprocessing and the API refuses them", async ({ page }) => {
  await signInPage(page, demoUser("accountant"), `/t/${t()}/events?status=FAILED`);
  await expect(page.getByRole("heading", { name: "Events", level: 1 })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Bulk reprocessing" })).toHaveCount(0);
  const accountant = await signInApi(demoUser("accountant"));
  const res = await accountant.call("POST", `/api/v1/tenants/${t()}/events/bulk-reprocess`, {
    filter: { status: "FAILED" },
    expected: 1,
    reason: "trying anyway",
  });
  expect(res.status).toBe(403);
  await accountant.api.dispose();
});
