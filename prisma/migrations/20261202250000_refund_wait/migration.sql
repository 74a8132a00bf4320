-- AlterTable
ALTER TABLE "processed_events" ADD COLUMN     "waiting_for" TEXT;
