// Reconciliation from the dashboard: a run against the provider's API started
// from the form, a report uploaded with its progress, a malformed report refused
// with the row and column at fault, and a run's buckets.
import { expect, test } from "@playwright/test";
import { demo, demoUser, shot, signInPage, unique } from "./support";

test("ops starts a run against the API, uploads reports, and drills into a run's buckets", async ({ page }) => {
  test.setTimeout(90_000);
  await signInPage(page, demoUser("ops"));
  await page.goto(`/t/${demo().tenant}/reconciliation`);
  await expect(page.getByRole("heading", { name: "Reconciliation", level: 1 })).toBeVisible();
  await expect(page.getByTestId("runs-table")).toContainText("seeded demo history");

  const start = page.getByRole("form", { name: "Run against a provider's API" });
  await start.getByLabel("Provider").selectOption("stripe");
  await start.getByLabel("From (UTC day)").fill(new Date().toISOString().slice(0, 10));
  await start.getByRole("button", { name: "Start run" }).click();
  const started = start.getByRole("status").filter({ hasText: /Run #\d+/ });
  await expect(started).toContainText("compared");

  const upload = page.getByRole("form", { name: "Upload a settlement report" });
  await upload.getByLabel("Provider").selectOption("standard");
  await upload.getByLabel("Report file").setInputFiles({
    name: "broken.csv",
    mimeType: "text/csv",
    buffer: Buffer.from(
      "reference,kind,amount,currency,occurred_at\npay_1,payment,10.00,EUR,2026-12-01T10:00:00Z\npay_2,payment,12.5x,EUR,2026-12-01T11:00:00Z\n",
    ),
  });
  await upload.getByRole("button", { name: "Upload and reconcile" }).click();
  await expect(page.getByTestId("upload-error")).toContainText('row 3, column "amount"');
  await expect(page.getByTestId("upload-error")).toContainText("nothing imported");
  await shot(page, "reconciliation-malformed-upload");

  // A larger report: its upload progress is reported while it is sent.
  const name = `${unique("standard-")}.csv`;
  const at = new Date(Date.now() - 3600_000).toISOString();
  const lines = Array.from({ length: 20_000 }, (_, i) => `settled_${i}_${unique("x")},other,1.00,EUR,${at}`);
  await upload.getByLabel("Report file").setInputFiles({
    name,
    mimeType: "text/csv",
    buffer: Buffer.from(
      `${[
        "reference,kind,amount,currency,occurred_at",
        ...lines,
        `${unique("pay_missing_")},payment,5.00,EUR,${at}`,
      ].join("\n")}\n`,
    ),
  });
  // A slow uplink (200 KiB/s), so the progress is there to be seen.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 20,
    downloadThroughput: -1,
    uploadThroughput: 200 * 1024,
  });
  await upload.getByRole("button", { name: "Upload and reconcile" }).click();
  const progress = upload.getByRole("progressbar", { name: "Upload progress" });
  await expect(progress).toBeVisible();
  await expect(upload.getByText(/Uploading: [\d.]+ MiB of [\d.]+ MiB/)).toBeVisible();
  await shot(page, "reconciliation-upload-progress");
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
  const done = upload.getByRole("status").filter({ hasText: /Run #\d+/ });
  await expect(done).toContainText("1 theirs-not-ours", { timeout: 30_000 });
  await expect(page.getByTestId("runs-table")).toContainText(name);
  await shot(page, "reconciliation-runs");

  await done.getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Run #");
  await expect(page.getByText("matched (a count only: matches are not stored one by one)")).toBeVisible();
  await expect(page.getByRole("heading", { name: /Theirs, not ours/ })).toContainText("(1)");
  await expect(page.getByText(name)).toBeVisible();
  await shot(page, "reconciliation-run");
});
