-- Refused deliveries (#20.7): a delivery to a known endpoint whose signature did not
-- verify was only counted in a metric, so "signature refused" as a discrepancy's cause
-- could only be inferred from the endpoint's secret history. The acknowledgement now
-- keeps a bounded record of each (lib/pipeline/refused.ts): why, when, the body's hash
-- and size and its first bytes. Untrusted, unverified bytes: never parsed into money,
-- only searched for a reference the provider settled and we never received.
CREATE TABLE "refused_deliveries" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" "Provider" NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "reason" TEXT NOT NULL,
    "hint" TEXT,
    "body_bytes" INTEGER NOT NULL,
    "body_sha256" BYTEA NOT NULL,
    "body_head" BYTEA NOT NULL,
    "headers" JSONB NOT NULL,

    CONSTRAINT "refused_deliveries_pkey" PRIMARY KEY ("tenant_id","id")
);

CREATE INDEX "refused_deliveries_tenant_id_provider_received_at_idx" ON "refused_deliveries"("tenant_id", "provider", "received_at");

ALTER TABLE "refused_deliveries" ADD CONSTRAINT "refused_deliveries_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
