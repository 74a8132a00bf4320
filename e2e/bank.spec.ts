// Bank statements from the dashboard: an accountant imports a camt.053 whose credit
// names a payout in transit, sees the payout matched by its reference and the
// other credit highlighted as unmatched; a statement with a DOCTYPE is refused
// with the reason; ops read the page but have no import form.
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { withDb } from "./db";
import { demo, demoUser, shot, signInPage, unique } from "./support";

const statement = (reference: string, unmatchedRef: string) => `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>${unique("MSG")}</MsgId><CreDtTm>2026-12-04T06:00:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>E2E-1</Id>
      <FrToDt><FrDtTm>2026-12-01T00:00:00</FrDtTm><ToDtTm>2026-12-03T23:59:59</ToDtTm></FrToDt>
      <Acct><Id><IBAN>DE89370400440532013000</IBAN></Id></Acct>
      <Ntry>
        <Amt Ccy="EUR">1500.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>
        <BookgDt><Dt>2026-12-03</Dt></BookgDt><AcctSvcrRef>${unique("E2E-A")}</AcctSvcrRef>
        <NtryDtls><TxDtls>
          <RltdPties><Dbtr><Nm>STRIPE PAYMENTS EUROPE</Nm></Dbtr></RltdPties>
          <RmtInf><Ustrd>STRIPE PAYOUT</Ustrd><Ustrd>${reference}</Ustrd></RmtInf>
        </TxDtls></NtryDtls>
      </Ntry>
      <Ntry>
        <Amt Ccy="EUR">77.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>
        <BookgDt><Dt>2026-12-03</Dt></BookgDt><AcctSvcrRef>${unmatchedRef}</AcctSvcrRef>
        <NtryDtls><TxDtls><RmtInf><Ustrd>Invoice 4711</Ustrd></RmtInf></TxDtls></NtryDtls>
      </Ntry>
      <Ntry>
        <Amt Ccy="EUR">3.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>
        <BookgDt><Dt>2026-12-03</Dt></BookgDt>
      </Ntry>
    </Stmt>
  </BkToCstmrStmt>
</Document>
`;

test("an accountant imports a statement and sees which payout each credit settled, and what is unmatched", async ({
  page,
}) => {
  test.setTimeout(90_000);
  const reference = unique("po_e2e");
  await withDb((c) =>
    c.query(
      `INSERT INTO payouts (tenant_id, provider, reference, currency, our_amount, arrival_date)
       SELECT id, 'stripe', $2, 'EUR', 150000, '2026-12-02' FROM tenants WHERE slug = $1`,
      [demo().tenant, reference],
    ),
  );
  await signInPage(page, demoUser("accountant"));
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Bank" }).click();
  await expect(page.getByRole("heading", { name: "Bank", level: 1 })).toBeVisible();

  const form = page.getByRole("form", { name: "Import a bank statement" });
  await form.getByLabel("Statement file").setInputFiles({
    name: "hostile.xml",
    mimeType: "application/xml",
    buffer: Buffer.from('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><Document/>'),
  });
  await form.getByRole("button", { name: "Import and match" }).click();
  await expect(page.getByTestId("bank-upload-error")).toContainText("a DOCTYPE is not allowed");
  await expect(page.getByTestId("bank-upload-error")).toContainText("nothing imported");

  const unmatchedRef = unique("E2E-B");
  await form.getByLabel("Statement file").setInputFiles({
    name: "december.xml",
    mimeType: "application/xml",
    buffer: Buffer.from(statement(reference, unmatchedRef)),
  });
  await form.getByRole("button", { name: "Import and match" }).click();
  const done = page.getByTestId("bank-upload-done");
  await expect(done).toContainText("3 lines (2 credits, 1 debit); 1 payout matched");
  await expect(page.getByTestId("statements-table")).toContainText("december.xml");
  await shot(page, "bank-statements");

  await done.getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("1 unmatched credit");
  const lines = page.getByTestId("bank-lines");
  const matched = lines.locator("tr[data-row='1']");
  await expect(matched).toContainText("reference in the remittance");
  await expect(matched).toContainText(reference);
  const unmatched = lines.locator("tr[data-row='2']");
  await expect(unmatched).toHaveClass(/row-unmatched/);
  await expect(unmatched).toContainText("unmatched");
  await expect(page.getByTestId("bank-runs")).toContainText("stripe: 1 of");
  await shot(page, "bank-statement-lines");
  const axe = await new AxeBuilder({ page }).include("main").analyze();
  expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);

  await page.getByRole("link", { name: "Unmatched credits" }).click();
  await expect(lines.locator("tbody tr")).toHaveCount(1);
  await expect(lines).toContainText(unmatchedRef);
});

test("ops read the bank page but cannot import", async ({ page }) => {
  await signInPage(page, demoUser("ops"));
  await page.goto(`/t/${demo().tenant}/bank`);
  await expect(page.getByRole("heading", { name: "Bank", level: 1 })).toBeVisible();
  await expect(page.getByRole("form", { name: "Import a bank statement" })).toHaveCount(0);
});
