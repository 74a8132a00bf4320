// Delivering alert notifications: the dispatcher that drains alert_notifications
// after the commit that queued them (at least once, leased, retried on
// TALLY_ALERT_RETRY_SCHEDULE, dead when it runs out), and the three ways a
// notification leaves: mail, a generic JSON webhook, Slack's incoming-webhook
// format. Each carries the row's idempotency key (tally-alert-<id>) so a receiver
// drops the repeat a crash between sending and recording can cause.
import type { Transporter } from "nodemailer";
import type { AlertChannelKind } from "@/lib/generated/prisma/enums";
import type { OpenChannel } from "@/lib/alerts/channels";
import { config } from "@/lib/platform/config";
import { parseNetworks, postJsonGuarded } from "@/lib/platform/outbound";
import { Prisma, prisma } from "@/lib/platform/db";
import { open } from "@/lib/platform/secrets-at-rest";

/** What a notification says; stored as the row's payload when it is queued. */
export type AlertMessage = {
  tenant: string;
  rule: string;
  subject: string;
  status: "opened" | "resolved" | "test";
  title: string;
  message: string;
  link: string;
  openedAt: string;
  resolvedAt?: string;
};

export type Delivery = { idempotencyKey: string; message: AlertMessage };

export const idempotencyKeyOf = (notificationId: bigint) => `tally-alert-${notificationId}`;

const headline = (m: AlertMessage) =>
  `${m.status === "resolved" ? "Resolved" : m.status === "test" ? "Test" : "Alert"}: ${m.title}`;

let mailer: Transporter | undefined;
let mailerUrl: string | undefined;

async function mailTransport(): Promise<Transporter> {
  const url = config().TALLY_ALERT_SMTP_URL ?? config().TALLY_SMTP_URL;
  if (!url) throw new Error("email channels need TALLY_ALERT_SMTP_URL (or TALLY_SMTP_URL) to be set");
  if (mailer && mailerUrl === url) return mailer;
  const nodemailer = await import("nodemailer");
  mailer = nodemailer.createTransport(url);
  mailerUrl = url;
  return mailer;
}

let trusted: { text: string; list: ReturnType<typeof parseNetworks> } | undefined;
/** TALLY_ALERT_PRIVATE_NETWORKS, parsed once per value. */
export function trustedNetworks() {
  const text = config().TALLY_ALERT_PRIVATE_NETWORKS;
  if (trusted?.text !== text) trusted = { text, list: parseNetworks(text) };
  return trusted.list;
}

async function postJson(url: string, key: string, body: unknown): Promise<void> {
  // An admin typed this URL: only public addresses (or networks the operator trusts), no redirects.
  const response = await postJsonGuarded(
    url,
    { "content-type": "application/json", "idempotency-key": key },
    JSON.stringify(body),
    { trusted: trustedNetworks(), timeoutMs: 10_000 },
  );
  if (response.status >= 300 && response.status < 400)
    throw new Error(`receiver answered ${response.status}, a redirect, which is not followed`);
  if (response.status >= 400)
    throw new Error(`receiver answered ${response.status}${response.text ? `: ${response.text.slice(0, 200)}` : ""}`);
}

/** Slack's incoming-webhook body: `text` for notifications and old clients, blocks for the message itself. */
export function slackBody(m: AlertMessage) {
  const mark =
    m.status === "resolved" ? ":large_green_circle:" : m.status === "test" ? ":white_circle:" : ":red_circle:";
  const text = `${mark} [${m.tenant}] ${headline(m)}: ${m.message} <${m.link}|Open in Tally>`;
  return {
    text,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: `${mark} *[${m.tenant}] ${headline(m)}*\n${m.message}` } },
      {
        type: "actions",
        elements: [{ type: "button", text: { type: "plain_text", text: "Open in Tally" }, url: m.link }],
      },
    ],
  };
}

export async function deliver(channel: Pick<OpenChannel, "kind" | "target">, d: Delivery): Promise<void> {
  const m = d.message;
  const kind: AlertChannelKind = channel.kind;
  if (kind === "EMAIL") {
    const mail = await mailTransport();
    await mail.sendMail({
      from: config().TALLY_ALERT_FROM,
      to: channel.target,
      subject: `[Tally ${m.tenant}] ${headline(m)}`,
      text: `${m.message}\n\nOpen in Tally: ${m.link}\n\nRule ${m.rule}, ${m.subject}; opened ${m.openedAt}${m.resolvedAt ? `, resolved ${m.resolvedAt}` : ""}.`,
      // A stable Message-ID lets mail systems drop a repeated delivery.
      messageId: `<${d.idempotencyKey}@tally>`,
      headers: { "X-Tally-Idempotency-Key": d.idempotencyKey },
    });
  } else if (kind === "WEBHOOK") {
    await postJson(channel.target, d.idempotencyKey, { idempotencyKey: d.idempotencyKey, ...m });
  } else {
    await postJson(channel.target, d.idempotencyKey, slackBody(m));
  }
}

export type AlertDispatch = { leased: number; sent: number; failed: number; dead: number };

/** The wait after the n-th failed attempt, or null when the schedule has run out. */
const retryDelayMs = (attempts: number, schedule: number[]) => schedule[attempts - 1] ?? null;

export async function dispatchAlertNotifications(
  o: { batch?: number; leaseMs?: number; schedule?: number[] } = {},
): Promise<AlertDispatch> {
  const batch = o.batch ?? 20;
  const leaseMs = o.leaseMs ?? config().TALLY_OUTBOX_LEASE_MS;
  const schedule = o.schedule ?? config().TALLY_ALERT_RETRY_SCHEDULE;
  // Leased like the receipts' outbox: available_at pushed past the send, so a
  // dispatcher that dies mid-send only delays the row, and replicas skip it.
  const rows = await prisma.$queryRaw<
    { id: bigint; payload: AlertMessage; attempts: number; kind: AlertChannelKind; target: string }[]
  >(Prisma.sql`
    WITH leased AS (
      UPDATE alert_notifications SET available_at = now() + ${leaseMs} * interval '1 millisecond', attempts = attempts + 1
      WHERE id IN (
        SELECT id FROM alert_notifications WHERE sent_at IS NULL AND dead_at IS NULL AND available_at <= now()
        ORDER BY id LIMIT ${batch} FOR UPDATE SKIP LOCKED)
      RETURNING id, channel_id, payload, attempts)
    SELECT l.id, l.payload, l.attempts, c.kind, c.target FROM leased l JOIN alert_channels c ON c.id = l.channel_id
    ORDER BY l.id`);
  const result: AlertDispatch = { leased: rows.length, sent: 0, failed: 0, dead: 0 };
  for (const row of rows) {
    try {
      const target = row.kind === "EMAIL" ? row.target : open(row.target);
      await deliver({ kind: row.kind, target }, { idempotencyKey: idempotencyKeyOf(row.id), message: row.payload });
      await prisma.$executeRaw(
        Prisma.sql`UPDATE alert_notifications SET sent_at = now(), last_error = NULL WHERE id = ${row.id} AND sent_at IS NULL`,
      );
      result.sent++;
    } catch (error) {
      result.failed++;
      const message = (error instanceof Error ? error.message : String(error)).slice(0, 1000);
      const delay = retryDelayMs(row.attempts, schedule);
      if (delay === null) result.dead++;
      await prisma.$executeRaw(
        delay === null
          ? Prisma.sql`UPDATE alert_notifications SET last_error = ${message}, dead_at = now() WHERE id = ${row.id} AND sent_at IS NULL`
          : Prisma.sql`
        UPDATE alert_notifications SET last_error = ${message}, available_at = now() + ${delay} * interval '1 millisecond'
        WHERE id = ${row.id} AND sent_at IS NULL`,
      );
    }
  }
  return result;
}
