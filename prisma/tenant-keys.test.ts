// Citus-readiness (#19.6, docs/scaling.md): distributing by tenant_id needs every primary
// key, unique key and foreign key of a tenant-owned table to include tenant_id. Not all do
// yet; this test lists the ones that do not, against the list below. A new table or key
// that breaks the rule fails it (the list only shrinks), and a key made composite fails it
// too until it is struck off, so the list always says exactly where the schema stands.
import { describe, expect, it } from "vitest";
import { pool } from "@/lib/platform/db";

/** Tables that are not tenant-owned: Citus reference tables (replicated) or local. */
const NOT_TENANT_OWNED = new Set([
  "_prisma_migrations",
  "tenants",
  "users",
  "sessions",
  "oidc_sign_ins",
  "login_failures",
  "case_sla",
]);

/** Keys known not to include tenant_id (docs/scaling.md says what making them composite takes). */
const KNOWN = [
  "accounts primary key (id)",
  "alert_channels primary key (id)",
  "alert_notifications foreign key (channel_id) -> alert_channels",
  "alert_notifications primary key (id)",
  "alerts primary key (id)",
  "api_tokens primary key (id)",
  "api_tokens unique (token_hash)",
  "audit_log primary key (id)",
  "balances foreign key (account_id) -> accounts",
  "balances primary key (account_id, currency, slot)",
  "bank_lines foreign key (statement_id) -> bank_statements",
  "bank_lines primary key (id)",
  "bank_statements primary key (id)",
  "bulk_reprocess_items foreign key (job_id) -> bulk_reprocess_jobs",
  "bulk_reprocess_items foreign key (raw_event_id) -> raw_events",
  "bulk_reprocess_items primary key (job_id, raw_event_id)",
  "bulk_reprocess_jobs primary key (id)",
  "case_approvals foreign key (proposal_id, proposer_id) -> case_proposals",
  "case_approvals primary key (id)",
  "case_approvals unique (proposal_id, approver_id)",
  "case_proposals foreign key (case_id) -> cases",
  "case_proposals foreign key (posting_id) -> postings",
  "case_proposals primary key (id)",
  "case_proposals unique (posting_id)",
  "cases foreign key (conflict_id) -> claim_conflicts",
  "cases foreign key (discrepancy_id) -> recon_discrepancies",
  "cases primary key (id)",
  "cases unique (conflict_id)",
  "cases unique (discrepancy_id)",
  "claim_conflicts foreign key (processed_event_id) -> processed_events",
  "claim_conflicts foreign key (raw_event_id) -> raw_events",
  "claim_conflicts primary key (id)",
  "claim_conflicts unique (processed_event_id, delivered_key)",
  "endpoint_secrets foreign key (endpoint_id) -> provider_endpoints",
  "endpoint_secrets primary key (id)",
  "gap_checks primary key (id)",
  "ledger_entries foreign key (account_id) -> accounts",
  "ledger_entries foreign key (posting_id) -> postings",
  "ledger_entries primary key (id)",
  "outbox foreign key (posting_id) -> postings",
  "outbox primary key (id)",
  "payout_lines primary key (id)",
  "payouts primary key (id)",
  "postings foreign key (processed_event_id) -> processed_events",
  "postings foreign key (reverses_posting_id) -> postings",
  "postings primary key (id)",
  "postings unique (processed_event_id)",
  "processed_events foreign key (raw_event_id) -> raw_events",
  "processed_events primary key (id)",
  "processed_events unique (idempotency_key)",
  "provider_endpoints primary key (id)",
  "raw_event_queue foreign key (raw_event_id) -> raw_events",
  "raw_event_queue primary key (raw_event_id)",
  "raw_events foreign key (duplicate_of_id) -> raw_events",
  "raw_events primary key (id)",
  "recon_discrepancies primary key (id)",
  "recon_run_items foreign key (discrepancy_id) -> recon_discrepancies",
  "recon_run_items foreign key (run_id) -> recon_runs",
  "recon_run_items primary key (run_id, discrepancy_id)",
  "recon_runs primary key (id)",
];

async function violations(): Promise<string[]> {
  const { rows } = await pool().query<{ item: string }>(
    `
    WITH owned AS (
      SELECT c.oid, c.relname FROM pg_class c
      WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND NOT (c.relname = ANY($1::text[]))),
    keys AS (
      SELECT o.relname, k.conname, k.contype, k.conkey, k.confrelid
      FROM owned o JOIN pg_constraint k ON k.conrelid = o.oid
      -- A partitioned table's foreign key is repeated on its partitions (conparentid): counted once, on the parent.
      WHERE k.contype IN ('p', 'u', 'f') AND k.conparentid = 0
      UNION ALL
      -- Unique indexes that are not constraints (Prisma's @@unique and @unique are indexes).
      SELECT o.relname, i.relname, 'u', ix.indkey::int2[], 0
      FROM owned o JOIN pg_index ix ON ix.indrelid = o.oid JOIN pg_class i ON i.oid = ix.indexrelid
      WHERE ix.indisunique AND NOT ix.indisprimary
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = ix.indexrelid))
    SELECT k.relname || ' ' || CASE k.contype WHEN 'p' THEN 'primary key' WHEN 'u' THEN 'unique' ELSE 'foreign key' END
           || ' (' || (SELECT string_agg(a.attname, ', ' ORDER BY a.attnum) FROM pg_attribute a
                       JOIN owned o ON o.relname = k.relname
                       WHERE a.attrelid = o.oid AND a.attnum = ANY(k.conkey)) || ')'
           || CASE WHEN k.contype = 'f' THEN ' -> ' || k.confrelid::regclass::text ELSE '' END AS item
    FROM keys k
    WHERE NOT EXISTS (
      SELECT 1 FROM pg_attribute a JOIN owned o ON o.relname = k.relname
      WHERE a.attrelid = o.oid AND a.attname = 'tenant_id' AND a.attnum = ANY(k.conkey))
      -- A foreign key to a table that is not tenant-owned (tenants, users) is fine on a distributed table.
      AND NOT (k.contype = 'f' AND (SELECT relname FROM pg_class WHERE oid = k.confrelid) = ANY($1::text[]))
    ORDER BY 1`,
    [[...NOT_TENANT_OWNED]],
  );
  return rows.map((r) => r.item);
}

describe("keys of tenant-owned tables (Citus-readiness)", () => {
  it("include tenant_id, except those listed as known", async () => {
    const found = await violations();
    expect(found).toEqual([...KNOWN].sort());
  });

  it("finds a key that leaves tenant_id out (the check itself can fail)", async () => {
    await pool().query(
      "CREATE TABLE tenant_keys_probe (id BIGSERIAL PRIMARY KEY, tenant_id UUID NOT NULL REFERENCES tenants(id), code TEXT UNIQUE)",
    );
    try {
      expect(await violations()).toEqual(
        expect.arrayContaining(["tenant_keys_probe primary key (id)", "tenant_keys_probe unique (code)"]),
      );
      expect((await violations()).filter((v) => v.startsWith("tenant_keys_probe foreign key"))).toEqual([]);
    } finally {
      await pool().query("DROP TABLE tenant_keys_probe");
    }
  });
});
