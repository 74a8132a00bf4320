// The operator CLI's plumbing: commands declare their flags, this parses them,
// prints usage, and turns domain failures into a message and a non-zero exit.
import { parseArgs, type ParseArgsConfig } from "node:util";

export class UsageError extends Error {}
export class CommandFailed extends Error {}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** A flag's kind: a value, a value that may repeat, or an on/off switch. No flag here has a default or a short form. */
type Flag = "string" | "strings" | "boolean";

/** parseArgs options from each flag's kind, in the order given (usage lists them in that order). */
export function flags(spec: Record<string, Flag>): Options {
  return Object.fromEntries(
    Object.entries(spec).map(([name, kind]) => [
      name,
      kind === "strings" ? { type: "string" as const, multiple: true } : { type: kind },
    ]),
  );
}

export type Command = {
  /** "tenant add" */
  name: string;
  summary: string;
  options: Options;
  /** Options the command cannot run without. */
  required?: string[];
  /** Does the command need the database (started and migrated)? */
  database?: boolean;
  run(args: Record<string, string | boolean | string[] | undefined>): Promise<void>;
};

export function usage(command: Command): string {
  const flags = Object.entries(command.options)
    .map(([name, o]) => {
      const value = o.type === "string" ? ` <${name}>` : "";
      const optional = !command.required?.includes(name);
      const text = `--${name}${value}${o.multiple ? " …" : ""}`;
      return optional ? `[${text}]` : text;
    })
    .join(" ");
  return `npm run tally -- ${command.name} ${flags}`.trimEnd();
}

export function parseCommand(command: Command, argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: command.options, strict: true, allowPositionals: false });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\nUsage: ${usage(command)}`);
  }
  const missing = (command.required ?? []).filter((name) => parsed.values[name] === undefined);
  if (missing.length)
    throw new UsageError(`Missing ${missing.map((m) => `--${m}`).join(", ")}\nUsage: ${usage(command)}`);
  return parsed.values as Record<string, string | boolean | string[] | undefined>;
}

/** Fails the command with the domain's own message when a result is not ok. */
export function orFail<T>(result: { ok: true; value: T } | { ok: false; message: string }): T {
  if (!result.ok) throw new CommandFailed(result.message);
  return result.value;
}

export function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return "(none)";
  const columns = Object.keys(rows[0]!);
  const text = (v: unknown) => (v instanceof Date ? v.toISOString() : v === null || v === undefined ? "" : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => text(r[c]).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [
    line(columns),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.map((r) => line(columns.map((c) => text(r[c])))),
  ].join("\n");
}

export function printJson(data: unknown): void {
  console.log(JSON.stringify(data, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2));
}
