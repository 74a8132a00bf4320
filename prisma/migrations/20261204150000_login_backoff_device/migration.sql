-- Sign-in back-off is kept per account and address, or per account and known
-- device (lib/auth/login-limit.ts); this records which device failed.
-- AlterTable
ALTER TABLE "login_failures" ADD COLUMN     "device" TEXT;
