// Processes an e2e spec starts on a stack of its own (its own database, its own
// `next start`): the project's TypeScript scripts run to completion, and children stopped cleanly.
import { type ChildProcess, spawnSync } from "node:child_process";
import pg from "pg";
import { embeddedUrl } from "../lib/platform/embedded-postgres";

/** Runs a project script under tsx with the spec's environment; its exit code and all it printed. */
export function runScript(env: NodeJS.ProcessEnv, script: string, args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", script, ...args], {
    env,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, out: r.stdout + r.stderr };
}

/** SIGTERM to a child still running, and wait until it has exited. */
export async function stopProcess(p: ChildProcess | undefined): Promise<void> {
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once("exit", r));
  p.kill("SIGTERM");
  await exited;
}

/** The replay's summary lines (runs, verdict, differences), for the test's output. */
export function replaySummary(out: string): string {
  return out
    .split("\n")
    .filter((l) => /^(run|VERDICT| {2}-| {2}✗)/.test(l))
    .join("\n");
}

/** A database of the spec's own on the e2e PostgreSQL, migrated by the project's runner; the runner's output on failure. */
export async function createMigratedDatabase(env: NodeJS.ProcessEnv, pgPort: number, database: string) {
  const admin = new pg.Client({ connectionString: embeddedUrl(pgPort, "postgres") });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  return runScript(env, "workers/tally.ts", ["db", "migrate"]);
}
