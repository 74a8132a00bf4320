// Alerts that reach people (issue #21), as ops meet them: an admin adds an email
// channel and sends a test; a provider's webhooks go silent and the alert is
// mailed, then clears; receipts die (their receiver was down for the whole
// schedule); the worker's rule opens an alert and one email arrives at a real SMTP
// server with a link; ops open that link, bulk-redeliver the dead receipts, and
// one "resolved" email follows. Nothing more while the alert stays open or closed.
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { SMTPServer } from "smtp-server";
import { count, withDb } from "./db";
import { demo, demoUser, sendStripe, signInApi, signInPage, stripePayment, unique } from "./support";

const t = () => demo().tenant;

type Mail = { to: string; subject: string; body: string };
const mails: Mail[] = [];
let smtp: SMTPServer;

/** Unfolds headers, undoes quoted-printable soft breaks and encoded words: enough to read what nodemailer wrote. */
function readMail(raw: string, to: string): Mail {
  const qp = (s: string) =>
    Buffer.from(
      s
        .replace(/=\r?\n/g, "")
        .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
      "latin1",
    ).toString("utf8");
  const [head, ...rest] = raw.split(/\r?\n\r?\n/);
  const subject = (/^Subject: (.*(?:\r?\n[ \t].*)*)/im.exec(head ?? "")?.[1] ?? "")
    .replace(/\r?\n[ \t]/g, " ")
    .replace(/\?= =\?UTF-8\?Q\?/g, "")
    .replace(/=\?UTF-8\?Q\?(.*?)\?=/g, (_m, q: string) => qp(q.replace(/_/g, " ")));
  return { to, subject, body: qp(rest.join("\n\n")) };
}

test.beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      let raw = "";
      stream.on("data", (c: Buffer) => {
        raw += c.toString("utf8");
      });
      stream.on("end", () => {
        mails.push(readMail(raw, session.envelope.rcptTo.map((r) => r.address).join(",")));
        callback();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(Number(process.env.TALLY_E2E_SMTP_PORT), "127.0.0.1", r));
  expect((smtp.server.address() as AddressInfo).port).toBe(Number(process.env.TALLY_E2E_SMTP_PORT));
});
test.afterAll(() => new Promise<void>((r) => smtp.close(() => r())));

test("email alerts on silent webhooks and on dead receipts; the latter links ops to them; redelivering clears it with one more email", async ({
  page,
  request,
}) => {
  test.setTimeout(180_000);
  const channel = unique("ops-mail-");
  const to = `${channel}@example.test`;
  // The demo tenant may have other alerts open (its seeded discrepancies, say): this journey reads the test and the dead receipts'.
  const mine = () => mails.filter((m) => m.to === to && /Test:|dead/.test(m.subject));

  // The admin adds the channel and checks it with a test.
  await signInPage(page, demoUser("admin"), `/t/${t()}/admin`);
  const form = page.getByRole("form", { name: "Add an alert channel" });
  await form.getByLabel("Kind").selectOption("EMAIL");
  await form.getByLabel("Name").fill(channel);
  await form.getByLabel(/Email address\(es\)/).fill(to);
  await form.getByRole("button", { name: "Add channel" }).click();
  const row = page.getByRole("row", { name: new RegExp(channel) });
  await expect(row).toBeVisible();
  await row.getByRole("button", { name: "Send a test" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Test notification delivered" })).toBeVisible();
  expect(mine().map((m) => m.subject)).toEqual([`[Tally ${t()}] Test: test notification to "${channel}"`]);

  // Stripe's webhooks go silent: the reconciliation raises its silence alert (as run.ts's checkSilence
  // does when a provider settled far more than it delivered), and the rule mails it with the overview's link.
  const silence = await withDb(
    async (c) =>
      (
        await c.query<{ id: string }>(
          `INSERT INTO alerts (tenant_id, provider, kind, message) SELECT id, 'stripe', 'webhook_silence', $2 FROM tenants WHERE slug = $1 RETURNING id`,
          [t(), `stripe settled 40 payments but Tally received 0 webhooks (${channel})`],
        )
      ).rows[0]!.id,
  );
  const silent = () => mails.filter((m) => m.to === to && /silent|webhook silence/.test(m.subject));
  await expect.poll(() => silent().length, { timeout: 30_000 }).toBe(1);
  expect(silent()[0]!.subject).toBe(`[Tally ${t()}] Alert: stripe's webhooks have gone silent`);
  expect(/Open in Tally: (\S+)/.exec(silent()[0]!.body)?.[1]).toBe(
    `http://localhost:${process.env.TALLY_E2E_PORT}/t/${t()}`,
  );
  await withDb((c) => c.query(`UPDATE alerts SET cleared_at = now() WHERE id = $1`, [silence]));
  await expect.poll(() => silent().length, { timeout: 30_000 }).toBe(2);
  expect(silent()[1]!.subject).toBe(`[Tally ${t()}] Resolved: webhook silence (stripe) is back to normal`);

  // Two receipts whose receiver was down for the whole retry schedule.
  const base = unique("pi_e2e_alert_");
  const refs = [1, 2].map((i) => `${base}_${i}`);
  for (const reference of refs) await sendStripe(request, stripePayment(reference, { amount: 1800, currency: "eur" }));
  const receipts = `FROM outbox o JOIN postings p ON p.id = o.posting_id WHERE p.provider_reference = ANY($1)`;
  await expect.poll(() => count(`SELECT count(*) AS n ${receipts} AND o.sent_at IS NOT NULL`, [refs])).toBe(2);
  await withDb((c) =>
    c.query(
      `UPDATE outbox SET sent_at = NULL, dead_at = now(), attempts = 8, last_error = 'receiver answered 503' WHERE id IN (SELECT o.id ${receipts})`,
      [refs],
    ),
  );

  // The worker's rule opens the alert: one email, with the link to the dead receipts.
  await expect.poll(() => mine().length, { timeout: 30_000 }).toBe(2);
  const alert = mine()[1]!;
  expect(alert.subject).toMatch(new RegExp(`^\\[Tally ${t()}\\] Alert: \\d+ receipts? dead-lettered$`));
  const link = /Open in Tally: (\S+)/.exec(alert.body)?.[1];
  expect(link).toBe(`http://localhost:${process.env.TALLY_E2E_PORT}/t/${t()}/claims/dead-receipts`);

  // Ops follow the link and redeliver everything the filter matches.
  await page.context().clearCookies();
  await signInPage(page, demoUser("ops"), new URL(link!).pathname);
  await expect(page.getByRole("heading", { name: "Dead receipts", level: 1 })).toBeVisible();
  await page.getByLabel("Reference starts with").fill(base);
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByText("2 dead receipts match these filters")).toBeVisible();
  await page.getByRole("button", { name: "Redeliver all 2 matching" }).click();
  const dialog = page.getByRole("dialog", { name: "Redeliver 2 dead receipts?" });
  await dialog.getByLabel("Reason").fill("receiver is back; the alert said so");
  await dialog.getByRole("button", { name: "Redeliver 2 receipts" }).click();
  await expect(page.getByRole("status")).toContainText("2 receipts queued again");
  await expect.poll(() => count(`SELECT count(*) AS n ${receipts} AND o.sent_at IS NOT NULL`, [refs])).toBe(2);

  // The alert clears: one "resolved" email, and nothing more after it.
  await expect.poll(() => mine().length, { timeout: 30_000 }).toBe(3);
  expect(mine()[2]!.subject).toBe(`[Tally ${t()}] Resolved: dead receipts is back to normal`);
  expect(
    await count(
      `SELECT count(*) AS n FROM alert_notifications n JOIN alert_channels c ON c.id = n.channel_id WHERE c.name = $1 AND n.rule = 'dead_receipts'`,
      [channel],
    ),
  ).toBe(2);

  // Leave the other specs' alerts out of this inbox.
  const admin = await signInApi(demoUser("admin"));
  const id = await withDb(
    async (c) =>
      (await c.query<{ id: string }>(`SELECT id FROM alert_channels WHERE name = $1`, [channel])).rows[0]!.id,
  );
  const off = await admin.call("PATCH", `/api/v1/tenants/${t()}/alerts/channels/${id}`, {
    enabled: false,
    reason: "end of the e2e journey",
  });
  expect(off.status).toBe(200);
  await admin.api.dispose();
});
