// Importing a bank statement: the file is read as a stream (camt053.ts or csv.ts),
// its booked lines are COPYed into bank_lines, the statement is recorded with its
// SHA-256, and the payouts are matched (match.ts), all in one transaction: a file
// refused half-way (a bad amount on entry 90,000) leaves nothing behind, and a
// statement is never stored without its matching having run.
//
// The same file twice is refused as already_imported: checked before reading when
// the file is on disk, and in any case by the unique (tenant, sha256) the
// statement row takes at the end (two imports of one file at once: the second
// waits on the first's key, then is refused).
import { createHash, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { from as copyFrom } from "pg-copy-streams";
import type { Actor } from "@/lib/admin/audit";
import { readCamt053 } from "@/lib/bank/camt053";
import { type CsvLayout, parseLayout } from "@/lib/bank/csv";
import { readStatementCsv } from "@/lib/bank/csv";
import { type MatchSummary, matchPayouts } from "@/lib/bank/match";
import { emptyMeta, StatementError, type StatementLine, type StatementMeta } from "@/lib/bank/statement-line";
import { pool, prisma } from "@/lib/platform/db";
import type { DomainResult } from "@/lib/platform/refusal";

export const STATEMENT_FORMATS = ["camt053", "csv"] as const;
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];

export type ImportInput = {
  tenantId: string;
  /** A file on disk, or a stream of its bytes (read once, never held whole). */
  source: { file: string } | { stream: AsyncIterable<Buffer | string> };
  format: StatementFormat;
  /** The CSV layout (validated here); camt.053 needs none. */
  layout?: unknown;
  /** The name people gave the file: shown on the statement and its runs. */
  sourceName: string;
  actor: Actor;
};

export type ImportSummary = {
  statementId: bigint;
  account: string;
  from: string | null;
  to: string | null;
  lines: number;
  credits: number;
  debits: number;
  /** Entries the file has but did not book (pending, information only), by status. */
  skipped: Record<string, number>;
  skippedPending: number;
  matchedPayouts: number;
  matchedCredits: number;
  withinTolerance: number;
  unmatchedPayouts: number;
  unmatchedCredits: number;
  ambiguous: number;
  casesOpened: number;
  casesClosed: number;
  casesReopened: number;
  runs: MatchSummary["runs"];
  durationMs: number;
};

/** COPY text format: backslash, tab and line breaks escaped; NULL is \N. */
const copyText = (v: string | null) =>
  v === null ? "\\N" : v.replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n").replace(/\r/g, "\\r");

async function fileSha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

async function alreadyImported(tenantId: string, sha256: string) {
  const s = await prisma.bankStatement.findUnique({
    where: { tenantId_sha256: { tenantId, sha256 } },
    select: { id: true, sourceName: true, importedAt: true, actorLabel: true },
  });
  return s
    ? {
        ok: false as const,
        reason: "already_imported" as const,
        message: `This file was imported already: statement #${s.id}${s.sourceName ? ` (${s.sourceName})` : ""}, on ${s.importedAt.toISOString().slice(0, 16).replace("T", " ")} UTC by ${s.actorLabel} (same SHA-256 ${sha256.slice(0, 12)}…); nothing was imported again`,
      }
    : null;
}

export async function importBankStatement(input: ImportInput): Promise<DomainResult<ImportSummary>> {
  const started = new Date();
  let layout: CsvLayout | null = null;
  if (input.format === "csv") {
    if (input.layout === undefined)
      return {
        ok: false,
        reason: "invalid_layout",
        message: "A CSV statement needs its layout (columns, date format, decimal separator…)",
      };
    const parsed = parseLayout(input.layout);
    if (!parsed.ok) return { ok: false, reason: "invalid_layout", message: parsed.message };
    layout = parsed.layout;
  }
  if ("file" in input.source) {
    const known = await alreadyImported(input.tenantId, await fileSha256(input.source.file));
    if (known) return known;
  }

  const hash = createHash("sha256");
  const bytes =
    "file" in input.source ? createReadStream(input.source.file, { highWaterMark: 64 * 1024 }) : input.source.stream;
  async function* hashed() {
    for await (const chunk of bytes) {
      hash.update(chunk);
      yield chunk;
    }
  }
  const meta: StatementMeta = emptyMeta();
  const lines: AsyncIterable<StatementLine> =
    layout === null ? readCamt053(hashed(), meta) : readStatementCsv(hashed(), layout, meta);

  const client = await pool().connect();
  try {
    await client.query("BEGIN");
    // The hash is known only once the file is read: a placeholder no other file can have holds the row till then.
    const [statement] = (
      await client.query<{ id: string }>(
        `INSERT INTO bank_statements (tenant_id, format, source_name, account, sha256, actor_type, actor_label, imported_at)
         VALUES ($1, $2, $3, '', $4, $5::"ActorType", $6, $7) RETURNING id::text`,
        [
          input.tenantId,
          input.format,
          input.sourceName,
          `reading:${randomUUID()}`,
          input.actor.type,
          input.actor.label,
          started,
        ],
      )
    ).rows;
    const statementId = BigInt(statement!.id);
    const counts = { lines: 0, credits: 0, debits: 0 };
    // Rows go out in ~64 KiB chunks, one CopyData message each, not one per line.
    async function* chunks() {
      let chunk = "";
      for await (const l of lines) {
        counts.lines++;
        if (l.amount > 0n) counts.credits++;
        else if (l.amount < 0n) counts.debits++;
        chunk += `${input.tenantId}\t${statementId}\t${l.row}\t${copyText(l.account)}\t${copyText(l.entryRef)}\t${l.bookingDate}\t${l.valueDate ?? "\\N"}\t${l.amount}\t${l.currency}\t${copyText(l.remittance)}\t${copyText(l.counterparty)}\t${l.reversal ? "t" : "f"}\n`;
        if (chunk.length >= 65_536) {
          yield chunk;
          chunk = "";
        }
      }
      if (chunk) yield chunk;
    }
    await pipeline(
      Readable.from(chunks()),
      client.query(
        copyFrom(
          "COPY bank_lines (tenant_id, statement_id, row_no, account, entry_ref, booking_date, value_date, amount, currency, remittance, counterparty, reversal) FROM STDIN",
        ),
      ),
    );
    const sha256 = hash.digest("hex");
    const skippedPending = Object.values(meta.skipped).reduce((s, n) => s + n, 0);
    const account = meta.accounts.join(", ") || "(no account)";
    try {
      await client.query(
        `UPDATE bank_statements SET sha256 = $2, account = $3, currency = $4, from_date = $5, to_date = $6, lines = $7, skipped_entries = $8 WHERE id = $1`,
        [
          String(statementId),
          sha256,
          account,
          meta.currencies.length === 1 ? meta.currencies[0] : null,
          meta.from,
          meta.to,
          counts.lines,
          skippedPending,
        ],
      );
    } catch (error) {
      if ((error as { code?: string }).code !== "23505") throw error;
      await client.query("ROLLBACK");
      return (
        (await alreadyImported(input.tenantId, sha256)) ?? {
          ok: false,
          reason: "already_imported",
          message: "This file was imported already; nothing was imported again",
        }
      );
    }
    const match = await matchPayouts(client, {
      tenantId: input.tenantId,
      statement: { id: statementId, sourceName: input.sourceName, from: meta.from, to: meta.to },
      actor: input.actor,
      startedAt: started,
      linesAdded: counts.lines,
    });
    const summary: ImportSummary = {
      statementId,
      account,
      from: meta.from,
      to: meta.to,
      ...counts,
      skipped: meta.skipped,
      skippedPending,
      matchedPayouts: match.matchedPayouts,
      matchedCredits: match.matchedCredits,
      withinTolerance: match.withinTolerance,
      unmatchedPayouts: match.unmatchedPayouts,
      unmatchedCredits: match.unmatchedCredits,
      ambiguous: match.ambiguous,
      casesOpened: match.casesOpened,
      casesClosed: match.casesClosed,
      casesReopened: match.casesReopened,
      runs: match.runs,
      durationMs: Date.now() - started.getTime(),
    };
    await client.query(
      `INSERT INTO audit_log (actor_type, actor_id, actor_label, tenant_id, action, subject_type, subject_id, details)
       VALUES ($1::"ActorType", $2, $3, $4, 'bank.import', 'bank_statement', $5, $6)`,
      [
        input.actor.type,
        input.actor.id ?? null,
        input.actor.label,
        input.tenantId,
        String(statementId),
        JSON.stringify(
          {
            ...summary,
            format: input.format,
            sourceName: input.sourceName,
            sha256,
            // The payouts this import settled, by which line and rule (the first 1,000).
            matches: match.matches.slice(0, 1000).map((m) => ({
              line: m.lineId,
              rule: m.outcome,
              payouts: m.payouts.map((p) => `${p.provider}:${p.reference}`),
            })),
          },
          (_k, v) => (typeof v === "bigint" ? v.toString() : v),
        ),
      ],
    );
    await client.query("COMMIT");
    return { ok: true, value: summary };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    if (error instanceof StatementError)
      return {
        ok: false,
        reason: "malformed_statement",
        message: `Statement refused, nothing imported: ${error.message}`,
      };
    throw error;
  } finally {
    client.release();
  }
}
