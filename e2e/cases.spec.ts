// Four-eyes on a case the demo's reconciliation opened: a payment Stripe never
// settled. Accountant A proposes the reversal and cannot approve it (no button,
// and a forged request is refused); accountant B approves; the ledger shows the
// reversing posting and the balance moves by exactly its amount; the audit log
// has both steps. Ops cannot decide cases at all.
import { expect, test, type Page } from "@playwright/test";
import { demo, demoUser, shot, signInApi, signInPage } from "./support";

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
