// Prints the DDL that takes an empty database to prisma/schema.prisma, offline.
// Prisma 6 still wants `url` in the datasource block (Prisma 7 moved it to
// prisma.config.ts), so it reads a copy of the schema with the url put back.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const here = import.meta.dirname;
const schema = readFileSync(path.join(here, "..", "schema.prisma"), "utf8").replace(
  /datasource db \{([^}]*)\}/,
  (_, body) => `datasource db {${body}  url = env("DATABASE_URL")\n}`,
);
const copy = path.join(mkdtempSync(path.join(os.tmpdir(), "tally-ddl-")), "schema.prisma");
writeFileSync(copy, schema);
const cli = path.join(here, "node_modules", "prisma", "build", "index.js");
const out = execFileSync(process.execPath, [cli, "migrate", "diff", "--from-empty", "--to-schema-datamodel", copy, "--script"], {
  cwd: here,
  env: {
    ...process.env,
    DATABASE_URL: process.env.DATABASE_URL ?? "postgresql://localhost/unused",
    PRISMA_SCHEMA_ENGINE_BINARY: "/bin/false",
    PRISMA_QUERY_ENGINE_LIBRARY: "/bin/false",
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
    CHECKPOINT_DISABLE: "1",
  },
  encoding: "utf8",
  stdio: ["ignore", "pipe", "pipe"],
});
process.stdout.write(out);
