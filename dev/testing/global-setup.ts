// Once per test run: a PostgreSQL server (DATABASE_URL's, else a throw-away
// embedded one) and a template database with every migration applied. Each
// test file then gets its own copy of the template, so files run in parallel.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres, type EmbeddedServer } from "@/lib/platform/embedded-postgres";
import { migrate } from "@/lib/platform/migrate";

declare module "vitest" {
  export interface ProvidedContext {
    adminUrl: string;
    templateDb: string;
  }
}

let server: EmbeddedServer | undefined;
let dataRoot: string | undefined;
let runTmp: string | undefined;

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export default async function setup(project: TestProject) {
  // Every temporary folder of the run (the tests' report files, receipts, simulator
  // certificates, the embedded server's data) goes under one folder that is removed
  // when the run ends, passed or failed: TMPDIR is what os.tmpdir() reads, and the
  // test workers and their child processes inherit it.
  runTmp = mkdtempSync(path.join(os.tmpdir(), "tally-vitest-"));
  // As root the embedded server runs as the postgres user, who must be able to pass through it.
  chmodSync(runTmp, 0o755);
  process.env.TMPDIR = runTmp;
  let adminUrl: string;
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
  } else {
    dataRoot = mkdtempSync(path.join(os.tmpdir(), "tally-test-"));
    // As root the server runs as the postgres user, who must be able to enter this folder.
    chmodSync(dataRoot, 0o755);
    const port = 20000 + Math.floor(Math.random() * 20000);
    server = await startEmbeddedPostgres({ dataDir: path.join(dataRoot, "pg"), port, ephemeral: true });
    adminUrl = server.url("postgres");
  }
  const templateDb = `tally_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${templateDb}`);
  await admin.query(`CREATE DATABASE ${templateDb}`);
  await admin.end();
  await migrate(withDatabase(adminUrl, templateDb));
  project.provide("adminUrl", adminUrl);
  project.provide("templateDb", templateDb);

  return async () => {
    if (server) await server.stop();
    else {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${templateDb}`);
      await c.end();
    }
    if (dataRoot) rmSync(dataRoot, { recursive: true, force: true });
    if (runTmp) rmSync(runTmp, { recursive: true, force: true });
  };
}
