-- CreateTable
CREATE TABLE "gap_checks" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" "Provider" NOT NULL,
    "window_from" TIMESTAMPTZ(3) NOT NULL,
    "window_to" TIMESTAMPTZ(3) NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "found" INTEGER NOT NULL DEFAULT 0,
    "stored" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,

    CONSTRAINT "gap_checks_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "gap_checks_tenant_id_provider_started_at_idx" ON "gap_checks"("tenant_id", "provider", "started_at");

-- AddForeignKey
ALTER TABLE "gap_checks" ADD CONSTRAINT "gap_checks_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
