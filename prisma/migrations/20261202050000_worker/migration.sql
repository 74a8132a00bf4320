-- AlterTable
ALTER TABLE "raw_events" ADD COLUMN     "event_type" TEXT,
ADD COLUMN     "note" TEXT;

-- AlterTable
ALTER TABLE "processed_events" ADD COLUMN     "retry_at" TIMESTAMPTZ(3);
