// How receipts leave Tally. Every delivery carries the outbox id as its
// idempotency key: delivery is at least once, so the receiving side drops repeats.
import { mkdir, open, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { config } from "@/lib/platform/config";

/** traceParent: the delivery's span (W3C traceparent), sent on as a header where the transport has headers. */
export type Receipt = {
  outboxId: bigint;
  tenantId: string;
  payload: Record<string, unknown>;
  traceParent?: string | null;
};

export interface ReceiptTransport {
  readonly name: string;
  send(receipt: Receipt): Promise<void>;
}

export const idempotencyKeyOf = (r: Receipt) => `tally-outbox-${r.outboxId}`;

/** One JSON line per delivery: the embedded default, and what tests count. */
export function fileTransport(file: string): ReceiptTransport {
  let handle: Promise<FileHandle> | undefined;
  return {
    name: `file:${file}`,
    async send(r) {
      handle ??= mkdir(path.dirname(file), { recursive: true }).then(() => open(file, "a"));
      const line = JSON.stringify({
        idempotencyKey: idempotencyKeyOf(r),
        outboxId: r.outboxId.toString(),
        tenantId: r.tenantId,
        deliveredAt: new Date().toISOString(),
        ...r.payload,
      });
      // One write() per line on an O_APPEND descriptor: lines from several workers never interleave.
      await (await handle).write(`${line}\n`);
    },
  };
}

export async function smtpTransport(
  url: string,
  from: string,
  fallbackTo: string | undefined,
): Promise<ReceiptTransport> {
  const nodemailer = await import("nodemailer");
  const mailer = nodemailer.createTransport(url);
  return {
    name: "smtp",
    async send(r) {
      const p = r.payload as {
        kind?: string;
        amount?: string;
        currency?: string;
        reference?: string;
        account?: string;
        email?: string;
      };
      const to = p.email ?? fallbackTo;
      if (!to) throw new Error("receipt has no recipient and TALLY_RECEIPT_TO is not set");
      await mailer.sendMail({
        from,
        to,
        subject: `${p.kind === "REFUND" ? "Refund" : "Payment"} received: ${p.amount} ${p.currency} (${p.reference})`,
        text: `${p.kind === "REFUND" ? "Refund" : "Payment"} ${p.reference} for account ${p.account}: ${p.amount} ${p.currency} (minor units).`,
        // A stable Message-ID lets mail systems drop a repeated delivery.
        messageId: `<${idempotencyKeyOf(r)}@tally>`,
        headers: { "X-Tally-Idempotency-Key": idempotencyKeyOf(r) },
      });
    },
  };
}

/**
 * A JSON POST per receipt to the tenant's system. Any 2xx is delivered; anything
 * else (or no answer within the timeout) is a failure, retried on the schedule
 * and dead when it runs out. The receiver drops repeats by the Idempotency-Key.
 */
export function httpTransport(url: string, timeoutMs = 10_000): ReceiptTransport {
  return {
    name: `http:${new URL(url).origin}`,
    async send(r) {
      const key = idempotencyKeyOf(r);
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "idempotency-key": key,
          ...(r.traceParent && { traceparent: r.traceParent }),
        },
        body: JSON.stringify({
          idempotencyKey: key,
          outboxId: r.outboxId.toString(),
          tenantId: r.tenantId,
          ...r.payload,
        }),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: "error",
      });
      // Read the body so the connection is reused; keep a little of it for the error.
      const text = await response.text().catch(() => "");
      if (!response.ok) throw new Error(`receiver answered ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}`);
    },
  };
}

/**
 * TALLY_RECEIPT_WEBHOOK_URL: an HTTP POST; TALLY_SMTP_URL: mail; otherwise the
 * receipts file (TALLY_RECEIPTS_FILE, default .tally/receipts.ndjson).
 */
export async function configuredTransport(): Promise<ReceiptTransport> {
  const c = config();
  if (c.TALLY_RECEIPT_WEBHOOK_URL) return httpTransport(c.TALLY_RECEIPT_WEBHOOK_URL);
  if (c.TALLY_SMTP_URL) return smtpTransport(c.TALLY_SMTP_URL, c.TALLY_RECEIPT_FROM, c.TALLY_RECEIPT_TO);
  return fileTransport(c.TALLY_RECEIPTS_FILE ?? path.join(process.cwd(), ".tally", "receipts.ndjson"));
}
