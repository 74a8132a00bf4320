// bank commands: import a statement (camt.053 or CSV in a layout) and match it to
// the payouts; list what was imported.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { cliActor } from "@/lib/admin/audit";
import { plural } from "@/components/format";
import { importBankStatement, STATEMENT_FORMATS, type StatementFormat } from "@/lib/bank/import";
import { listStatements } from "@/lib/bank/statements";
import { CommandFailed, flags, orFail, printJson, table, UsageError, type Command } from "@/workers/cli/framework";
import { requireTenant } from "@/workers/cli/setup-commands";

/** --layout is the layout's JSON, or the path of a file holding it. */
function layoutArg(value: unknown): unknown {
  if (value === undefined) return undefined;
  const text = String(value).trim();
  const json = text.startsWith("{") ? text : existsSync(text) ? readFileSync(text, "utf8") : null;
  if (json === null)
    throw new UsageError(`--layout must be the CSV layout as JSON, or a JSON file; "${text}" is neither`);
  try {
    return JSON.parse(json) as unknown;
  } catch (error) {
    throw new UsageError(`--layout is not valid JSON: ${(error as Error).message}`);
  }
}

export const bankCommands: Command[] = [
  {
    name: "bank import",
    summary: "Import a bank statement (camt.053 XML, or CSV with --layout) and match it to the payouts",
    options: flags({ tenant: "string", file: "string", format: "string", layout: "string", json: "boolean" }),
    required: ["tenant", "file", "format"],
    database: true,
    async run(a) {
      const format = String(a.format);
      if (!(STATEMENT_FORMATS as readonly string[]).includes(format))
        throw new UsageError(`--format must be ${STATEMENT_FORMATS.join(" or ")}; got "${format}"`);
      if (format === "csv" && a.layout === undefined)
        throw new UsageError("A CSV statement needs --layout (its columns, date format, decimal separator…)");
      const file = String(a.file);
      if (!existsSync(file)) throw new CommandFailed(`No such file: ${file}`);
      const layout = layoutArg(a.layout);
      const tenant = await requireTenant(a.tenant);
      const r = orFail(
        await importBankStatement({
          tenantId: tenant.id,
          source: { file },
          format: format as StatementFormat,
          layout,
          sourceName: path.basename(file),
          actor: cliActor(),
        }),
      );
      if (a.json) return printJson(r);
      console.log(
        `Statement ${r.statementId} (${r.account}, ${r.from ?? "?"} → ${r.to ?? "?"}): ${plural(r.lines, "line")}, ${plural(r.credits, "credit")}, ${plural(r.debits, "debit")}${r.skippedPending ? `, ${r.skippedPending} not booked (skipped)` : ""}, in ${r.durationMs} ms`,
      );
      console.log(
        table([
          { outcome: "payouts matched", items: r.matchedPayouts, note: `by ${plural(r.matchedCredits, "credit")}` },
          { outcome: "within tolerance", items: r.withinTolerance, note: "matched; the difference is on the line" },
          { outcome: "ambiguous credits", items: r.ambiguous, note: "left unmatched: more than one fits" },
          { outcome: "payouts not at the bank", items: r.unmatchedPayouts, note: "after their window: cases" },
          { outcome: "provider credits unexplained", items: r.unmatchedCredits, note: "after their window: cases" },
        ]),
      );
      console.log(
        `${r.casesOpened} cases opened, ${r.casesClosed} closed, ${r.casesReopened} reopened; runs ${r.runs.map((x) => `${x.runId} (${x.provider})`).join(", ") || "none"}.`,
      );
    },
  },
  {
    name: "bank statements",
    summary: "List a tenant's imported bank statements and how much of each matched",
    options: flags({ tenant: "string", limit: "string" }),
    required: ["tenant"],
    database: true,
    async run(a) {
      const tenant = await requireTenant(a.tenant);
      const { statements } = await listStatements(tenant.id, { limit: Number(a.limit ?? 20) });
      console.log(
        table(
          statements.map((s) => ({
            id: s.id,
            file: s.sourceName ?? "",
            account: s.account,
            from: s.fromDate?.toISOString().slice(0, 10) ?? "",
            to: s.toDate?.toISOString().slice(0, 10) ?? "",
            lines: s.lines,
            credits: s.credits,
            matched: s.matched,
            unmatched: s.unmatchedCredits,
            by: s.actorLabel,
            at: s.importedAt,
          })),
        ),
      );
    },
  },
];
