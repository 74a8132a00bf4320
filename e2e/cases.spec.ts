// Four-eyes on a case the demo's reconciliation opened: a payment Stripe never
// settled. Accountant A proposes the reversal and cannot approve it (no button,
// and a forged request is refused); accountant B approves; the ledger shows the
// reversing posting and the balance moves by exactly its amount; the audit log
// has both steps. Ops cannot decide cases at all. And a close: a split payment's
// case assigned, snoozed and unsnoozed, then linked to the provider's two lines by
// accountant A and approved by accountant B.
import { expect, test, type Page } from "@playwright/test";
import { count } from "./db";
import { demo, demoUser, sendStripe, shot, signInApi, signInPage, stripePayment, unique } from "./support";

type CaseRow = { id: string; kind: string; status: string; discrepancy: { reference: string; ourAmount: string } };

let caseId: string;
let reference: string;
const accountantB = () => demo().users.find((u) => u.email === "accountant.b@demo.tally")!;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  // npm start plays the demo day in the background once the web app is up.
  const a = await signInApi(demoUser("accountant"));
  await expect
    .poll(
      async () => {
        const r = await a.call("GET", `/api/v1/tenants/${demo().tenant}/cases?kind=OURS_NOT_THEIRS&state=all`);
        const found = (r.json as { cases: CaseRow[] }).cases.find((c) =>
          c.discrepancy.reference.startsWith("pi_demo_not_at_stripe_"),
        );
        if (found) [caseId, reference] = [found.id, found.discrepancy.reference];
        return Boolean(found);
      },
      { timeout: 150_000, intervals: [1000] },
    )
    .toBe(true);
});

async function customerBalance(session: Awaited<ReturnType<typeof signInApi>>): Promise<bigint> {
  const r = await session.call("GET", `/api/v1/tenants/${demo().tenant}/accounts?code=acct_demo_phantom`);
  const account = (
    r.json as { accounts: { code: string; balances: { currency: string; amount: string }[] }[] }
  ).accounts.find((x) => x.code === "customer:acct_demo_phantom")!;
  return BigInt(account.balances.find((b) => b.currency === "USD")?.amount ?? "0");
}

async function forgeApproval(page: Page, proposalId: string) {
  const session = (await (await page.request.get("/api/auth/session")).json()) as { csrfToken: string };
  return page.request.post(`/api/v1/tenants/${demo().tenant}/cases/${caseId}/approvals`, {
    headers: { "x-csrf-token": session.csrfToken, origin: new URL(page.url()).origin },
    data: { proposalId, decision: "approve" },
  });
}

test("accountant A proposes a reversal and cannot approve it; accountant B approves; ledger and audit log show both", async ({
  page,
}) => {
  const api = await signInApi(demoUser("accountant"));
  const before = await customerBalance(api);
  expect(before).toBe(-4200n); // credit-normal: we owe the customer $42.00

  await signInPage(page, demoUser("accountant"));
  await page.goto(`/t/${demo().tenant}/cases`);
  await page
    .getByRole("row", { name: new RegExp(reference) })
    .getByRole("link")
    .click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(`Case #${caseId}`);
  // The evidence side by side: the webhook, our posting, and the absence of a provider line.
  await expect(page.getByLabel("Raw webhook body")).toContainText(reference);
  await expect(page.getByRole("region", { name: "Our ledger" })).toContainText("customer:acct_demo_phantom");
  await expect(page.getByTestId("their-line-absent")).toContainText(`No line for ${reference}`);

  // The proposal by keyboard: the radio, the reason code (first choice), the reason, then Tab to Propose.
  await page.getByLabel("Correct — reverse our posting").focus();
  await page.keyboard.press("Space");
  await expect(page.getByLabel("Correct — reverse our posting")).toBeChecked();
  await page.getByLabel("Reason code").focus();
  await page.keyboard.press("ArrowDown");
  await expect(page.getByLabel("Reason code")).toHaveValue("not_settled");
  const preview = page.getByTestId("correction-preview");
  await expect(preview.getByRole("row", { name: /clearing:stripe/ })).toContainText("$42.00");
  await expect(preview.getByRole("row", { name: /customer:acct_demo_phantom/ })).toContainText("$42.00");
  await page.getByLabel("Reason (for the checker and the audit log)").focus();
  await page.keyboard.type("Stripe has no such payment intent; the customer was never charged");
  await shot(page, "case-propose-correction");
  await page.keyboard.press("Tab");
  await expect(page.getByRole("button", { name: "Propose" })).toBeFocused();
  await page.keyboard.press("Enter");

  const pending = page.getByTestId("pending-proposal");
  await expect(pending).toBeVisible();
  await expect(page.getByTestId("own-proposal")).toContainText("a different accountant must approve");
  await expect(page.getByRole("button", { name: /approve/i })).toHaveCount(0);
  await shot(page, "case-proposed-no-approve-button");

  const detail = (await (await page.request.get(`/api/v1/tenants/${demo().tenant}/cases/${caseId}`)).json()) as {
    case: { proposals: { id: string; status: string }[] };
  };
  const proposalId = detail.case.proposals.find((p) => p.status === "PENDING")!.id;
  const forged = await forgeApproval(page, proposalId);
  expect(forged.status()).toBe(403);
  expect(((await forged.json()) as { error: { code: string } }).error.code).toBe("own_proposal");
  expect(await customerBalance(api)).toBe(before);

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await signInPage(page, accountantB());
  await page.goto(`/t/${demo().tenant}/cases/${caseId}`);
  await expect(page.getByTestId("pending-proposal")).toContainText("Stripe has no such payment intent");
  // The label the proposer picked, not the code.
  await expect(page.getByTestId("pending-reason-code")).toHaveText(
    "The provider never settled it (failed or reversed at the provider)",
  );
  await expect(page.getByTestId("pending-proposal")).not.toContainText("not_settled");
  // Approving asks once, by keyboard: Enter opens the dialog showing what will be posted; Escape posts nothing.
  const approve = page.getByRole("button", { name: "Approve and post the correction…" });
  await approve.focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog", { name: /Approve case #\d+'s proposal\?/ });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText("The provider never settled it");
  await expect(dialog.getByRole("row", { name: /customer:acct_demo_phantom/ })).toContainText("$42.00");
  await expect(dialog.getByRole("button", { name: "Approve and post" })).toBeFocused();
  await shot(page, "case-approve-confirm");
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  expect(await customerBalance(api)).toBe(before);
  await approve.focus();
  await page.keyboard.press("Enter");
  await expect(dialog.getByRole("button", { name: "Approve and post" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { level: 1 })).toContainText("resolved");
  const posted = page.getByText(/Correction posted as posting #\d+/);
  await expect(posted).toBeVisible();
  const postingId = /#(\d+)/.exec((await posted.textContent())!)![1]!;
  await expect(page.getByRole("list").filter({ hasText: "proposed" })).toContainText(
    "reason code: The provider never settled it (failed or reversed at the provider)",
  );
  await shot(page, "case-approved");

  // The ledger: a new correction posting reversing ours; the balance moved by exactly $42.00.
  const after = await customerBalance(api);
  expect(after - before).toBe(4200n);
  await page.goto(`/t/${demo().tenant}/ledger?code=acct_demo_phantom`);
  await page.getByRole("link", { name: "customer:acct_demo_phantom" }).click();
  const entry = page.getByRole("row", { name: new RegExp(`#${postingId} correction`) });
  await expect(entry).toContainText(reference);
  await expect(entry).toContainText("$42.00");
  await expect(page.getByRole("listitem").filter({ hasText: "USD balance" })).toContainText("$0.00");
  await shot(page, "ledger-after-correction");

  // The audit log: who proposed, who approved, and why.
  await page.goto(`/t/${demo().tenant}/audit?action=case.`);
  await expect(page.getByRole("row", { name: /case\.propose/ })).toContainText("accountant.a@demo.tally");
  await expect(page.getByRole("row", { name: /case\.propose/ })).toContainText("Stripe has no such payment intent");
  await expect(page.getByRole("row", { name: /case\.approve/ })).toContainText("accountant.b@demo.tally");
  await shot(page, "audit-four-eyes");
});

test("ops cannot see cases and cannot approve: no page, and the API answers 403", async ({ page }) => {
  await signInPage(page, demoUser("ops"));
  await page.goto(`/t/${demo().tenant}/cases/${caseId}`);
  await expect(page.getByRole("heading", { name: "Not available for your role" })).toBeVisible();
  await expect(page.getByRole("button", { name: /approve/i })).toHaveCount(0);
  const ops = await signInApi(demoUser("ops"));
  const r = await ops.call("POST", `/api/v1/tenants/${demo().tenant}/cases/${caseId}/approvals`, {
    proposalId: "1",
    decision: "approve",
  });
  expect(r.status).toBe(403);
  expect((r.json as { error: { code: string } }).error.code).toBe("forbidden");
  expect(
    (
      await ops.call("POST", `/api/v1/tenants/${demo().tenant}/cases/${caseId}/proposals`, {
        resolution: "ESCALATE",
        reason: "ops should not",
      })
    ).status,
  ).toBe(403);
});

test("a close: accountant A takes a split payment's case, snoozes and unsnoozes it, proposes linking the provider's two lines to our posting; accountant B approves", async ({
  page,
}) => {
  test.setTimeout(180_000);
  // Our payment of $100.00, which Stripe settled as two lines under other references.
  const reference = unique("pi_e2e_split_");
  const payment = stripePayment(reference, { amount: 10_000, account: "acct_e2e_split" });
  await sendStripe(page.request, payment);
  await expect
    .poll(() => count(`SELECT count(*) AS n FROM postings WHERE provider_reference = $1`, [reference]), {
      timeout: 30_000,
    })
    .toBe(1);
  // The report's window is its lines' span: the second our payment was made, and no other posting's.
  const at = (ms: number) => new Date(payment.created * 1000 + ms).toISOString();
  const report = `${[
    "reference,kind,amount,currency,occurred_at",
    `${reference}_a,payment,60.00,USD,${at(0)}`,
    `${reference}_b,payment,40.00,USD,${at(500)}`,
  ].join("\n")}\n`;
  const a = await signInApi(demoUser("accountant"));
  const upload = await a.api.post(
    `/api/v1/tenants/${demo().tenant}/reconciliation/uploads?provider=stripe&name=split.csv`,
    {
      headers: { "x-csrf-token": a.csrf, "content-type": "text/csv" },
      data: report,
    },
  );
  expect(upload.status(), await upload.text()).toBe(201);
  expect(await upload.json()).toMatchObject({ oursNotTheirs: 1, theirsNotOurs: 2 });
  const listed = await a.call("GET", `/api/v1/tenants/${demo().tenant}/cases?kind=OURS_NOT_THEIRS`);
  const splitCase = (listed.json as { cases: CaseRow[] }).cases.find((c) => c.discrepancy.reference === reference)!;
  const url = `/t/${demo().tenant}/cases/${splitCase.id}`;

  await signInPage(page, demoUser("accountant"));
  await page.goto(url);
  await expect(page.getByTestId("due")).toContainText(/in \d+ days?/);
  const work = page.getByTestId("case-work");
  await expect(work.getByTestId("assignee")).toContainText("Nobody has this case yet");

  // Assign to me: the picker starts on me; the reason goes to the audit log.
  await work.getByRole("button", { name: "Assign…" }).click();
  let dialog = page.getByRole("dialog", { name: new RegExp(`Assign case #${splitCase.id} to`) });
  await dialog.getByLabel("Reason").fill("Stripe split charges are mine this month");
  await dialog.getByRole("button", { name: "Assign" }).click();
  await expect(work.getByTestId("assignee")).toContainText("(you)");

  // Snooze until tomorrow (the first day offered): out of the open list, under snoozed.
  await work.getByRole("button", { name: "Snooze…" }).click();
  dialog = page.getByRole("dialog", { name: new RegExp(`Snooze case #${splitCase.id} until`) });
  await dialog.getByLabel("Reason").fill("Stripe support answers tomorrow");
  await dialog.getByRole("button", { name: "Snooze" }).click();
  await expect(work.getByTestId("snoozed")).toContainText("Stripe support answers tomorrow");
  await shot(page, "case-snoozed");
  await page.goto(`/t/${demo().tenant}/cases?assignee=mine`);
  await expect(page.getByRole("row", { name: new RegExp(reference) })).toHaveCount(0);
  await page
    .getByTestId("aging")
    .getByRole("link", { name: /snoozed/ })
    .click();
  await expect(page.getByRole("row", { name: new RegExp(reference) })).toContainText("snoozed until");
  await shot(page, "cases-snoozed-list");

  await page.goto(url);
  await work.getByRole("button", { name: "Unsnooze…" }).click();
  dialog = page.getByRole("dialog", { name: `Unsnooze case #${splitCase.id}?` });
  await dialog.getByLabel("Reason").fill("Stripe answered: it was split");
  await dialog.getByRole("button", { name: "Unsnooze" }).click();
  await expect(work.getByTestId("snoozed")).toHaveCount(0);
  await page.goto(`/t/${demo().tenant}/cases?assignee=mine&age=0-1`);
  const row = page.getByRole("row", { name: new RegExp(reference) });
  await expect(row).toContainText("0–1 days");
  await expect(row).toContainText("(you)");
  await shot(page, "cases-aging-mine");

  // Propose the link: both lines ticked add up to our posting.
  await page.goto(url);
  await page.getByRole("radio", { name: /^Link — these settlement lines/ }).check();
  const picker = page.getByTestId("link-picker");
  await picker.getByLabel(`${reference}_a`).check();
  await expect(page.getByTestId("link-total")).toContainText("$40.00 short");
  await expect(page.getByRole("button", { name: "Propose" })).toBeDisabled();
  await picker.getByLabel(`${reference}_b`).check();
  await expect(page.getByTestId("link-total")).toContainText("Chosen $100.00 of $100.00: adds up");
  await page
    .getByLabel("Reason (for the checker and the audit log)")
    .fill("Stripe settled the split charge as two lines");
  await shot(page, "case-propose-link");
  await page.getByRole("button", { name: "Propose" }).click();
  const pending = page.getByTestId("pending-proposal");
  await expect(pending.getByTestId("link-lines")).toContainText(`${reference}_a`);
  await expect(pending.getByTestId("link-lines")).toContainText("$100.00");
  await expect(page.getByTestId("own-proposal")).toBeVisible();
  await expect(page.getByRole("button", { name: /approve/i })).toHaveCount(0);

  // Accountant B approves; the case is resolved, the link kept in its history.
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await signInPage(page, accountantB());
  await page.goto(url);
  await page.getByRole("button", { name: "Approve the link…" }).click();
  const approve = page.getByRole("dialog", { name: /Approve case #\d+'s proposal\?/ });
  await expect(approve).toContainText("nothing is posted to the ledger");
  await expect(approve.getByTestId("link-lines")).toContainText(`${reference}_b`);
  await approve.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("resolved");
  await expect(page.locator("dt", { hasText: "Outcome" }).locator("xpath=following-sibling::dd[1]")).toContainText(
    `linked by case #${splitCase.id}: ${reference}_a + ${reference}_b`,
  );
  await expect(page.getByTestId("link-lines").first()).toContainText("$100.00");
  await shot(page, "case-linked");
  expect(
    await count(
      `SELECT count(*) AS n FROM recon_discrepancies WHERE reference IN ($1, $2, $3) AND state = 'RESOLVED'`,
      [reference, `${reference}_a`, `${reference}_b`],
    ),
  ).toBe(3);
  expect(await count(`SELECT count(*) AS n FROM postings WHERE provider_reference LIKE $1`, [`${reference}%`])).toBe(1);

  // The audit log has every step, each by its person.
  await page.goto(`/t/${demo().tenant}/audit?action=case.`);
  // The row's accessible name has its cells apart: "… case.assign case 12 …" (its text content runs them together).
  for (const [action, who] of [
    ["case.assign", "accountant.a@demo.tally"],
    ["case.snooze", "accountant.a@demo.tally"],
    ["case.unsnooze", "accountant.a@demo.tally"],
    ["case.propose", "accountant.a@demo.tally"],
    ["case.approve", "accountant.b@demo.tally"],
  ] as const)
    await expect(
      page.getByRole("row", { name: new RegExp(`${action.replace(".", "\\.")} case ${splitCase.id} `) }).first(),
    ).toContainText(who);
});
