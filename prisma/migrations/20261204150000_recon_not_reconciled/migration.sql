-- AlterTable
ALTER TABLE "recon_runs" ADD COLUMN     "not_reconciled" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "not_reconciled_lines" JSONB NOT NULL DEFAULT '[]';
