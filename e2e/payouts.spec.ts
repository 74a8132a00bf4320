// Reconciliation to the payout from the dashboard: a generated stretch of Stripe
// days (dev/simulator/month.ts: fees on every charge, disputes, daily payouts, a
// payout planted 1.00 short) is delivered to the running product, its settlement
// report uploaded through the page and its fees and payouts approved by a second
// accountant (four eyes on what the file alone reports); an accountant opens the payouts, finds the one
// that does not balance, reads its statement side by side and its lines, follows
// it to its case and takes it to the provider (a proposal awaiting a second
// accountant). A payout that balances says so.
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { generateMonth } from "@/dev/simulator/month";
import { signedDelivery } from "@/dev/simulator/sign";
import { withDb } from "./db";
import { demo, demoUser, shot, signInPage } from "./support";

test("an accountant closes payouts: a balanced one, and one 1.00 short followed to its case", async ({
  page,
  request,
  browser,
}) => {
  test.setTimeout(180_000);
  // Its own days, long ago, and its own ids (the seed): nothing else of the demo is in its window.
  const month = generateMonth({
    seed: Date.now() % 1_000_000_007,
    tenant: demo().tenant,
    start: "2025-03-01",
    days: 12,
    chargesPerDay: 3,
    disputes: 2,
    defects: ["short_payout"],
  });
  for (const d of month.deliveries) {
    const signed = signedDelivery(d, { stripe: demo().secrets.stripe });
    const res = await request.post(`/api/webhooks/${demo().tenant}/stripe`, {
      data: signed.body,
      headers: signed.headers,
    });
    expect(res.status()).toBe(200);
  }
  const payouts = month.truth.payouts.map((p) => p.reference);
  // The worker posts them beside the web process: every payout's posting is there.
  await expect
    .poll(
      () =>
        withDb(async (c) =>
          Number(
            (
              await c.query(`SELECT count(*) FROM postings WHERE kind = 'PAYOUT' AND provider_reference = ANY($1)`, [
                payouts,
              ])
            ).rows[0].count,
          ),
        ),
      { timeout: 60_000 },
    )
    .toBe(payouts.length);

  await signInPage(page, demoUser("accountant"));
  await page.goto(`/t/${demo().tenant}/reconciliation`);
  const upload = page.getByRole("form", { name: "Upload a settlement report" });
  await upload.getByLabel("Provider").selectOption("stripe");
  await upload.getByLabel("Report file").setInputFiles({
    name: "stripe-payouts.csv",
    mimeType: "text/csv",
    buffer: Buffer.from(month.settlementCsv),
  });
  await upload.getByRole("button", { name: "Upload and reconcile" }).click();
  const done = upload.getByRole("status").filter({ hasText: /Run #\d+/ });
  await expect(done).toBeVisible({ timeout: 60_000 });
  // Uploaded by a person, the report's fees and payouts wait for a second accountant: the uploader cannot approve.
  await expect(done).toContainText("settlement movements await a second person's approval");
  const runId = /Run #(\d+)/.exec((await done.textContent()) ?? "")![1]!;
  await page.goto(`/t/${demo().tenant}/reconciliation/${runId}`);
  const held = page.getByTestId("settlement-approval");
  await expect(held).toContainText("await a second person's approval");
  await expect(held.getByRole("button", { name: "Approve and post…" })).toHaveCount(0);

  const checker = demo().users.filter((u) => u.role === "accountant")[1]!;
  const second = await browser.newContext();
  const checkerPage = await second.newPage();
  await signInPage(checkerPage, checker);
  await checkerPage.goto(`/t/${demo().tenant}/reconciliation/${runId}`);
  const theirs = checkerPage.getByTestId("settlement-approval");
  await theirs.getByRole("button", { name: "Approve and post…" }).click();
  await checkerPage
    .getByLabel("Reason")
    .fill("the file is Stripe's itemized report for these days, checked against the dashboard");
  await checkerPage.getByRole("button", { name: "Approve and post", exact: true }).click();
  await expect(theirs).toContainText(`approved by ${checker.email}`);
  await shot(checkerPage, "settlement-approved");
  await second.close();
  await page.goto(`/t/${demo().tenant}/reconciliation`);

  await page.getByTestId("payouts-link").click();
  await expect(page.getByRole("heading", { name: "Payouts", level: 1 })).toBeVisible();
  const short = month.truth.expected.find((e) => e.defect === "short_payout")!.reference;
  const fine = month.truth.payouts.find((p) => !p.defect)!.reference;
  const table = page.getByTestId("payouts");
  await expect(table.getByRole("row", { name: new RegExp(short) })).toContainText("does not balance");
  await expect(table.getByRole("row", { name: new RegExp(fine) })).toContainText("balances");
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  await shot(page, "payouts-list");

  // A balanced payout: both sides' residual is zero once the worker has posted the settlement's fees.
  await table.getByRole("link", { name: fine }).click();
  await expect(page.getByTestId("payout-verdict")).toHaveText("balances", { timeout: 30_000 });
  await expect(page.getByTestId("theirs-residual")).toHaveText("$0.00");
  await expect(page.getByTestId("ours-residual")).toHaveText("$0.00");
  await page.goBack();

  await table.getByRole("link", { name: short }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(short);
  await expect(page.getByTestId("payout-verdict")).toHaveText("does not balance");
  // Theirs and ours side by side: the payout is 1.00 less than its lines come to.
  await expect(page.getByTestId("theirs-residual")).toHaveText("-$1.00");
  await expect(page.getByTestId("ours-residual")).toHaveText("-$1.00", { timeout: 30_000 });
  const lines = month.truth.payouts.find((p) => p.reference === short)!.balanceTransactions;
  await expect(page.getByTestId("payout-lines").getByRole("row")).toHaveCount(lines.length + 1);
  const csv = await page.request.get(`/api/v1/tenants/${demo().tenant}/payouts?format=csv`);
  expect(csv.headers()["content-type"]).toContain("text/csv");
  expect(await csv.text()).toContain(`${short},stripe,USD`);
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  await shot(page, "payout-statement-short");

  await page.getByTestId("payout-case").click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Case #");
  await page.getByLabel("Take it to the provider — the payout is not what its lines add up to").check();
  await page
    .getByLabel("Reason (for the checker and the audit log)")
    .fill("Stripe paid out 1.00 less than the payout's lines; asked Stripe support");
  await page.getByRole("button", { name: "Propose" }).click();
  await expect(page.getByTestId("pending-proposal")).toContainText("asked Stripe support");
  await shot(page, "payout-case-proposed");
});
