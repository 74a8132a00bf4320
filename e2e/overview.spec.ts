// The overview: the seeded 90-day discrepancy history charted with its verdict,
// live figures beside it, and the chart updating by polling when a new
// reconciliation run lands while the page stays open; stacked by cause, the day
// that run made is flagged above its control limit. Then ops' stuck claims:
// a claim that gave up is reprocessed from the UI and completes exactly once.
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { count, withDb } from "./db";
import { demo, demoUser, sendStripe, shot, signInApi, signInPage, stripePayment, unique } from "./support";

test("ops sees the 90-day history, the verdict and the live figures; a new run shows up without a reload", async ({
  page,
}) => {
  test.setTimeout(180_000);
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
  // The demo's live day is reconciled once the worker has drained it; wait for that run and count from
  // the API after it, so the total moves by this test's three alone.
  await expect
    .poll(
      () =>
        count(
          `SELECT count(*) AS n FROM recon_runs WHERE provider = 'stripe' AND status = 'DONE' AND source_name NOT LIKE 'seeded demo history%'`,
        ),
      { timeout: 120_000 },
    )
    .toBeGreaterThan(0);
  const overviewTotal = async () =>
    (
      (await (await page.request.get(`/api/v1/tenants/${demo().tenant}/overview?days=90`)).json()) as {
        series: { total: number };
      }
    ).series.total;
  const before = await overviewTotal();
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

  // Three in three compared today, against standard's seeded ~3%: far above the day's limit.
  const today = at.slice(0, 10);
  const breaches = page.getByTestId("control-breaches");
  await expect(breaches).toContainText(/^Breaches:/);
  await expect(breaches).toContainText(new RegExp(`${today} standard \\(rate 100\\.0% > limit \\d+\\.\\d%\\)`));

  // Stacked by cause: one bar series per cause in the legend, the breach marked on the chart and in its name.
  await page.getByRole("button", { name: "By cause" }).click();
  await expect(page.getByRole("button", { name: "By cause" })).toHaveAttribute("aria-pressed", "true");
  await expect(chart).toHaveAttribute("data-view", "cause");
  await expect(chart.locator(".recharts-area")).toHaveCount(0);
  const legend = chart.locator(".recharts-legend-wrapper");
  for (const cause of ["never delivered", "missing at provider", "amount differs", "above control limit"])
    await expect(legend).toContainText(cause);
  expect(await chart.locator(".recharts-bar-rectangle").count()).toBeGreaterThan(60);
  // One diamond per day with a breach, and none on the other days.
  const api = await page.request.get(`/api/v1/tenants/${demo().tenant}/overview?days=90`);
  const { control } = (await api.json()) as { control: { breaches: { day: string }[] } };
  await expect(chart.locator(".breach-marker")).toHaveCount(new Set(control.breaches.map((b) => b.day)).size);
  await expect(chart.locator(".breach-marker").first()).toBeVisible();
  await expect(chart.locator(".chart-canvas")).toHaveAttribute(
    "aria-label",
    new RegExp(`above the control limit: .*${today} standard`),
  );
  // The table follows the view: a column per cause, and the breach on its day's row.
  await expect(
    page.getByTestId("discrepancy-table").getByRole("columnheader", { name: "never delivered" }),
  ).toBeVisible();
  await expect(page.getByTestId("discrepancy-table").getByRole("row", { name: new RegExp(`^${today}`) })).toContainText(
    "breach:",
  );
  const axe = await new AxeBuilder({ page }).include("[data-testid=discrepancy-chart]").include(".panel").analyze();
  expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
  await shot(page, "overview-by-cause");
  // On a phone the three views' buttons and the wider table by cause do not push the page sideways.
  await page.setViewportSize({ width: 390, height: 844 });
  await expect
    .poll(() => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth))
    .toBeLessThanOrEqual(0);
  for (const name of ["By provider", "By kind", "By cause"]) {
    const box = (await page.getByRole("button", { name }).boundingBox())!;
    expect(box.x + box.width, name).toBeLessThanOrEqual(390);
  }
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
