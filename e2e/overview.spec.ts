// The overview: the seeded 90-day discrepancy history charted with its verdict,
// live figures beside it, and the chart updating by polling when a new
// reconciliation run lands while the page stays open. Then ops' stuck claims:
// a claim that gave up is reprocessed from the UI and completes exactly once.
import { expect, test } from "@playwright/test";
import { count, withDb } from "./db";
import { demo, demoUser, sendStripe, shot, signInApi, signInPage, stripePayment, unique } from "./support";

test("ops sees the 90-day history, the verdict and the live figures; a new run shows up without a reload", async ({
  page,
}) => {
  test.setTimeout(90_000);
  await signInPage(page, demoUser("ops"));
  await expect(page.getByRole("heading", { name: /Overview/, level: 1 })).toBeVisible();
  const verdict = page.getByTestId("verdict");
  await expect(verdict).toContainText(/falling|flat|rising/i);
  await expect(verdict).toContainText(/discrepanc/);
  await expect(page.getByTestId("ack-p99")).toContainText(/last \d+ (min|s)/);
  await expect(page.getByTestId("ack-p99")).toContainText("last 24 h");
  await expect(page.getByText("Events received today")).toBeVisible();
  await expect(page.getByText("Outbox backlog")).toBeVisible();

  await page.getByRole("button", { name: "90 days" }).click();
  await expect(page.getByRole("button", { name: "90 days" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("discrepancy-total")).toContainText("in the last 90 days");
  const chart = page.getByTestId("discrepancy-chart");
  await expect(chart.locator("svg.recharts-surface").first()).toBeVisible();
  await expect(chart.locator(".recharts-area")).toHaveCount(2); // stripe and standard, stacked
  await page.getByText("The daily counts as a table").click();
  // The seeded history: 90 days for two providers, falling with noise.
  const rows = page.getByTestId("discrepancy-table").getByRole("row");
  expect(await rows.count()).toBeGreaterThanOrEqual(88);
  await shot(page, "overview-90-days");

  const totalText = async () =>
    Number(/(\d+) discrepancies/.exec((await page.getByTestId("discrepancy-total").textContent()) ?? "")![1]);
  const before = await totalText();
  await page.evaluate(() => ((window as unknown as { __stillThisPage: boolean }).__stillThisPage = true));

  // A reconciliation run lands elsewhere: a standard report with three payments Tally never received.
  const at = new Date().toISOString();
  const csv = `${[
    "reference,kind,amount,currency,occurred_at",
    ...[1, 2, 3].map(() => `${unique("pay_missing_")},payment,10.00,EUR,${at}`),
  ].join("\n")}\n`;
  const admin = await signInApi(demoUser("admin"));
  const upload = await admin.api.post(
    `/api/v1/tenants/${demo().tenant}/reconciliation/uploads?provider=standard&name=missing.csv`,
    { headers: { "x-csrf-token": admin.csrf, "content-type": "text/csv" }, data: csv },
  );
  expect(upload.status(), await upload.text()).toBe(201);
  expect(((await upload.json()) as { theirsNotOurs: number }).theirsNotOurs).toBe(3);

  // react-query polls every 10 s: the chart's data moves without a reload.
  await expect.poll(totalText, { timeout: 25_000, intervals: [1000] }).toBe(before + 3);
  expect(await page.evaluate(() => (window as unknown as { __stillThisPage?: boolean }).__stillThisPage)).toBe(true);
  await shot(page, "overview-after-new-run");
});

test("ops reprocesses a claim that gave up from the stuck-claims page; the worker completes it exactly once", async ({
  page,
  request,
}) => {
  test.setTimeout(90_000);
  const payment = unique("pi_e2e_stuck_");
  const refund = unique("re_e2e_stuck_");
  const now = Math.floor(Date.now() / 1000);
  const send = (event: object) => sendStripe(request, event);
  // A refund that names no account arrives before its payment: the worker defers it...
  await send({
    id: unique("evt_"),
    object: "event",
    type: "refund.created",
    created: now,
    data: {
      object: {
        id: refund,
        object: "refund",
        amount: 500,
        currency: "usd",
        status: "succeeded",
        payment_intent: payment,
        charge: null,
        metadata: {},
        created: now,
      },
    },
  });
  await expect
    .poll(
      () =>
        count(
          `SELECT count(*) AS n FROM processed_events WHERE provider_reference = $1 AND last_error LIKE '%not posted yet%'`,
          [refund],
        ),
      { timeout: 30_000 },
    )
    .toBe(1);
  // ...and, for this test, gives up at once (in production: after TALLY_MAX_ATTEMPTS back-offs).
  await withDb(async (c) => {
    await c.query(
      `UPDATE processed_events SET status = 'FAILED', claimed_at = NULL, last_error = 'gave up: payment ' || $2 || ' never arrived' WHERE provider_reference = $1`,
      [refund, payment],
    );
    await c.query(
      `UPDATE raw_events SET status = 'FAILED', last_error = 'gave up waiting for the payment' WHERE id = (SELECT raw_event_id FROM processed_events WHERE provider_reference = $1)`,
      [refund],
    );
  });
  // The payment arrives later and is posted.
  await send(stripePayment(payment, { amount: 2000, account: "acct_e2e_stuck" }));
  await expect
    .poll(() => count(`SELECT count(*) AS n FROM postings WHERE provider_reference = $1`, [payment]), {
      timeout: 30_000,
    })
    .toBe(1);

  await signInPage(page, demoUser("ops"));
  await page.getByRole("link", { name: "Stuck claims" }).click();
  const row = page.getByRole("row", { name: new RegExp(refund) });
  await expect(row).toContainText("claim failed");
  await expect(row).toContainText("never arrived");
  await shot(page, "stuck-claims");
  await row.getByRole("button", { name: /Reprocess/ }).click();
  const dialog = page.getByRole("dialog", { name: /Reprocess event/ });
  await dialog.getByLabel("Reason").fill("payment has arrived now; apply the refund");
  await dialog.getByRole("button", { name: "Reprocess" }).click();
  await expect(page.getByRole("status").filter({ hasText: "claim(s) released" })).toBeVisible();

  // The normal worker path completes it: exactly one refund posting, and it stays one.
  await expect
    .poll(() => count(`SELECT count(*) AS n FROM postings WHERE provider_reference = $1`, [refund]), {
      timeout: 30_000,
    })
    .toBe(1);
  await expect(page.getByRole("row", { name: new RegExp(refund) })).toHaveCount(0, { timeout: 15_000 });
  const rawId = await withDb(async (c) =>
    String(
      (
        await c.query<{ id: string }>(`SELECT raw_event_id AS id FROM processed_events WHERE provider_reference = $1`, [
          refund,
        ])
      ).rows[0]!.id,
    ),
  );
  const ops = await signInApi(demoUser("ops"));
  const again = await ops.call("POST", `/api/v1/tenants/${demo().tenant}/events/${rawId}/reprocess`, {
    reason: "once more",
  });
  expect(again.status).toBe(409);
  expect(await count(`SELECT count(*) AS n FROM postings WHERE provider_reference = $1`, [refund])).toBe(1);
  await page.goto(`/t/${demo().tenant}/events/${rawId}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("done");

  // Accountants read the books but do not reprocess: 403.
  const accountant = await signInApi(demoUser("accountant"));
  expect(
    (
      await accountant.call("POST", `/api/v1/tenants/${demo().tenant}/events/${rawId}/reprocess`, {
        reason: "not mine",
      })
    ).status,
  ).toBe(403);
  await page.goto(`/t/${demo().tenant}/audit?action=event.reprocess`);
  await expect(page.getByRole("row", { name: /event\.reprocess/ }).first()).toContainText("payment has arrived now");
});
