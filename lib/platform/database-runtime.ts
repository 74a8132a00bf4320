// Makes sure there is a migrated database to talk to: DATABASE_URL's, or the
// embedded server's `tally` database (started here if nothing runs it yet).
import { config } from "@/lib/platform/config";
import { databaseUrl } from "@/lib/platform/db";
import {
  defaultDataDir,
  embeddedUrl,
  ensureDatabase,
  startEmbeddedPostgres,
  type EmbeddedServer,
} from "@/lib/platform/embedded-postgres";
import { migrate } from "@/lib/platform/migrate";

export type PreparedDatabase = {
  url: string;
  /** Set when this process started the embedded server (and must stop it). */
  embedded?: EmbeddedServer;
  applied: string[];
};

export async function prepareDatabase(options: { log?: (line: string) => void } = {}): Promise<PreparedDatabase> {
  const c = config();
  let embedded: EmbeddedServer | undefined;
  if (!c.DATABASE_URL) {
    const dataDir = defaultDataDir(c.TALLY_DATA_DIR);
    const server = await startEmbeddedPostgres({ dataDir, port: c.TALLY_PG_PORT, log: options.log });
    if (server.owned) {
      embedded = server;
      options.log?.(`embedded PostgreSQL on 127.0.0.1:${c.TALLY_PG_PORT}, data in ${dataDir}`);
    }
    await ensureDatabase(embeddedUrl(c.TALLY_PG_PORT, "postgres"), "tally");
  }
  const url = databaseUrl();
  const { applied } = await migrate(url);
  // Case due dates are set by a trigger from case_sla: it holds TALLY_CASE_SLA_DAYS from here on.
  const { syncCaseSla } = await import("@/lib/cases/sla");
  const slaChanged = await syncCaseSla();
  if (slaChanged.length)
    options.log?.(`case SLA changed for ${slaChanged.join(", ")} (applies to cases opened from now)`);
  // Secrets at rest: a wrong or missing key fails here, before anything serves; then
  // rows written before encryption are sealed (a data step SQL cannot do: it needs the key).
  const { checkEncryptionKeys, sealPlaintextSecrets } = await import("@/lib/admin/secret-keys");
  await checkEncryptionKeys();
  const sealed = await sealPlaintextSecrets();
  if (sealed.secrets || sealed.endpoints)
    options.log?.(
      `sealed ${sealed.secrets} signing secrets and ${sealed.endpoints} endpoints' credentials stored before encryption`,
    );
  return { url, embedded, applied };
}
