-- Single sign-on (OpenID Connect). A person signed in through the identity provider is
-- found again by the provider's (issuer, subject), which never changes, rather than by
-- email, which can. A sign-in under way keeps its PKCE verifier, state and nonce in a row
-- the browser's short-lived cookie points at (by SHA-256), taken once by the callback.
-- AlterTable
ALTER TABLE "users" ADD COLUMN     "oidc_issuer" TEXT,
ADD COLUMN     "oidc_subject" TEXT;

-- CreateTable
CREATE TABLE "oidc_sign_ins" (
    "id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "code_verifier" TEXT NOT NULL,
    "next_path" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "oidc_sign_ins_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "oidc_sign_ins_expires_at_idx" ON "oidc_sign_ins"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "users_oidc_issuer_oidc_subject_key" ON "users"("oidc_issuer", "oidc_subject");
