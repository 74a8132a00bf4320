// Dead receipts as ops meet them (issue #21.2): receipts whose retry schedule ran
// out are listed under Stuck claims → Dead receipts; ops redeliver one they
// select, then everything a filter matches, each confirmed in a dialog with a
// reason; a preview that went stale is refused rather than sending more than
// was shown; the product's own dispatcher then delivers them, and the audit log
// names who, why and which. Accountants have no such page.
import { expect, test } from "@playwright/test";
import { count, withDb } from "./db";
import { demo, demoUser, sendStripe, signInApi, signInPage, stripePayment, unique } from "./support";

const t = () => demo().tenant;

test("ops redeliver dead receipts by selection and by filter; a stale preview sends nothing", async ({
  page,
  request,
}) => {
  test.setTimeout(120_000);
  const base = unique("pi_e2e_dead_");
  const refs = [1, 2, 3, 4].map((i) => `${base}_${i}`);
  for (const reference of refs)
    await sendStripe(
      request,
      stripePayment(reference, { amount: 2500, currency: "eur", account: "acct_dead_letters" }),
    );
  const receiptsOf = (which: string[]) =>
    `FROM outbox o JOIN postings p ON p.id = o.posting_id WHERE p.provider_reference = ANY(ARRAY[${which
      .map((r) => `'${r}'`)
      .join(",")}])`;
  await expect.poll(() => count(`SELECT count(*) AS n ${receiptsOf(refs)} AND o.sent_at IS NOT NULL`)).toBe(4);
  // The receiving system was down for the whole schedule for three of them (the product
  // under test delivers to a file, which never refuses; the dispatcher's schedule is vitest's).
  const killed = refs.slice(0, 3);
  const kill = (which: string[]) =>
    withDb((c) =>
      c.query(
        `UPDATE outbox SET sent_at = NULL, dead_at = now(), attempts = 8, last_error = 'receiver answered 503' WHERE id IN (SELECT o.id ${receiptsOf(which)})`,
      ),
    );
  await kill(killed);

  await signInPage(page, demoUser("ops"), `/t/${t()}/claims`);
  await page.getByRole("link", { name: /dead receipts?/ }).click();
  await expect(page.getByRole("heading", { name: "Dead receipts", level: 1 })).toBeVisible();
  await page.getByLabel("Reference starts with").fill(base);
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByText("3 dead receipts match these filters")).toBeVisible();

  // One, selected.
  await page.getByRole("checkbox").first().check();
  await page.getByRole("button", { name: "Redeliver selected (1)" }).click();
  const dialog = page.getByRole("dialog", { name: "Redeliver 1 dead receipt?" });
  await dialog.getByLabel("Reason").fill("receiver is back; trying the newest first");
  await dialog.getByRole("button", { name: "Redeliver 1 receipt" }).click();
  await expect(page.getByRole("status")).toContainText("1 receipt queued again");
  await expect.poll(() => count(`SELECT count(*) AS n ${receiptsOf(killed)} AND o.sent_at IS NOT NULL`)).toBe(1);
  await expect(page.getByText("2 dead receipts match these filters")).toBeVisible({ timeout: 15_000 });

  // All matching, but another dies after the preview: nothing is sent, the person is told.
  await page.getByRole("button", { name: "Redeliver all 2 matching" }).click();
  await kill([refs[3]!]);
  const all = page.getByRole("dialog", { name: "Redeliver 2 dead receipts?" });
  await all.getByLabel("Reason").fill("receiver is back for everyone");
  await all.getByRole("button", { name: "Redeliver 2 receipts" }).click();
  await expect(all.getByRole("alert")).toContainText("matches 3 now: preview again");
  expect(await count(`SELECT count(*) AS n ${receiptsOf(refs)} AND o.dead_at IS NOT NULL`)).toBe(3);
  await all.getByRole("button", { name: "Cancel" }).click();

  await expect(page.getByText("3 dead receipts match these filters")).toBeVisible({ timeout: 15_000 });
  await page.getByRole("button", { name: "Redeliver all 3 matching" }).click();
  const again = page.getByRole("dialog", { name: "Redeliver 3 dead receipts?" });
  await again.getByLabel("Reason").fill("receiver is back for everyone");
  await again.getByRole("button", { name: "Redeliver 3 receipts" }).click();
  await expect(page.getByRole("status")).toContainText("3 receipts queued again");
  await expect.poll(() => count(`SELECT count(*) AS n ${receiptsOf(refs)} AND o.sent_at IS NOT NULL`)).toBe(4);
  await expect(page.getByRole("heading", { name: "No dead receipts match these filters" })).toBeVisible({
    timeout: 15_000,
  });

  const audit = await withDb(
    async (c) =>
      (
        await c.query<{ actor_label: string; reason: string; n: number }>(
          `SELECT actor_label, reason, (details->>'count')::int AS n FROM audit_log
           WHERE action = 'receipt.redeliver' AND details::text LIKE $1 ORDER BY id`,
          [`%${base}%`],
        )
      ).rows,
  );
  // The selection is audited by id, the bulk request by its filter (which names the prefix).
  expect(audit.map((a) => a.n)).toEqual([3]);
  expect(audit[0]).toMatchObject({ actor_label: demoUser("ops").email, reason: "receiver is back for everyone" });
  expect(
    await count(
      `SELECT count(*) AS n FROM audit_log WHERE action = 'receipt.redeliver' AND reason = 'receiver is back; trying the newest first'`,
    ),
  ).toBe(1);
});

test("accountants have no dead-receipts page and cannot redeliver", async ({ page }) => {
  await signInPage(page, demoUser("accountant"), `/t/${t()}/claims/dead-receipts`);
  await expect(page.getByRole("heading", { name: "Not available for your role" })).toBeVisible();
  const accountant = await signInApi(demoUser("accountant"));
  const res = await accountant.call("POST", `/api/v1/tenants/${t()}/receipts/dead/redeliver`, {
    ids: ["1"],
    reason: "trying anyway",
  });
  expect(res.status).toBe(403);
  await accountant.api.dispose();
});
