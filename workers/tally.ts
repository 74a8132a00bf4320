// `npm run tally -- <command>`: the operator CLI. Thin: parses flags, calls lib/.
import { cliActor } from "@/lib/admin/audit";
import { EncryptionKeyError, rotateEncryptionKey } from "@/lib/admin/secret-keys";
import { closeDb } from "@/lib/platform/db";
import { prepareDatabase, type PreparedDatabase } from "@/lib/platform/database-runtime";
import { alertCommands } from "@/workers/cli/alert-commands";
import { bankCommands } from "@/workers/cli/bank-commands";
import { caseCommands } from "@/workers/cli/case-commands";
import { CommandFailed, parseCommand, UsageError, usage, type Command } from "@/workers/cli/framework";
import { eventCommands } from "@/workers/cli/event-commands";
import { ledgerCommands } from "@/workers/cli/ledger-commands";
import { payoutCommands } from "@/workers/cli/payout-commands";
import { reconCommands } from "@/workers/cli/recon-commands";
import { setupCommands } from "@/workers/cli/setup-commands";

const dbMigrate: Command = {
  name: "db migrate",
  summary: "Apply pending migrations (also done by every command that needs the database)",
  options: {},
  async run() {
    const db = await prepareDatabase();
    console.log(db.applied.length ? `Applied ${db.applied.join(", ")}.` : "Database is up to date.");
    await db.embedded?.stop();
  },
};

const secretsRotateKey: Command = {
  name: "secrets rotate-key",
  summary:
    "Re-encrypt every stored signing secret and provider API key under TALLY_ENCRYPTION_KEY (old keys in TALLY_ENCRYPTION_KEYS), audited",
  options: {},
  database: true,
  async run() {
    const r = await rotateEncryptionKey(cliActor());
    console.log(
      `Re-encrypted ${r.secrets} signing secrets and ${r.endpoints} endpoints' credentials under key ${r.toKey}${r.fromKeys.length ? ` (from ${r.fromKeys.join(", ")})` : ""}. Old keys can now leave TALLY_ENCRYPTION_KEYS.`,
    );
  },
};

export const commands: Command[] = [
  dbMigrate,
  secretsRotateKey,
  ...setupCommands,
  ...eventCommands,
  ...reconCommands,
  ...payoutCommands,
  ...bankCommands,
  ...ledgerCommands,
  ...caseCommands,
  ...alertCommands,
];

function help(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    "Usage: npm run tally -- <command> [options]",
    "",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Add --help after a command for its options.",
  ].join("\n");
}

function find(argv: string[]): { command: Command; rest: string[] } | null {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(" ");
    const command = commands.find((c) => c.name === name);
    if (command) return { command, rest: argv.slice(words) };
  }
  return null;
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === "help" || argv[0] === "--help") {
    console.log(help());
    return 0;
  }
  const found = find(argv);
  if (!found) {
    console.error(`Unknown command "${argv.slice(0, 2).join(" ")}".\n\n${help()}`);
    return 2;
  }
  const { command, rest } = found;
  if (rest.includes("--help")) {
    console.log(`${command.summary}\nUsage: ${usage(command)}`);
    return 0;
  }
  let db: PreparedDatabase | undefined;
  try {
    const args = parseCommand(command, rest);
    if (command.database) db = await prepareDatabase();
    await command.run(args);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    if (error instanceof EncryptionKeyError) {
      console.error(`Error: ${error.message}`);
      return 1;
    }
    if (error instanceof CommandFailed) {
      console.error(`Error: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await closeDb();
    await db?.embedded?.stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
