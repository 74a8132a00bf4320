-- Alerts that reach people (issue #21): per-tenant channels, one state row per
-- (tenant, rule, subject), and the notifications as an outbox of their own.

CREATE TYPE "AlertChannelKind" AS ENUM ('EMAIL', 'WEBHOOK', 'SLACK');
CREATE TYPE "AlertTransition" AS ENUM ('OPENED', 'RESOLVED');

-- EMAIL: target is the recipient address(es), comma-separated, in the clear.
-- WEBHOOK, SLACK: target is the URL, sealed like every secret at rest (a Slack
-- incoming-webhook URL is itself the credential that lets anyone post).
CREATE TABLE "alert_channels" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "kind" "AlertChannelKind" NOT NULL,
    "name" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "alert_channels_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "alert_channels_tenant_id_name_key" ON "alert_channels"("tenant_id", "name");
ALTER TABLE "alert_channels" ADD CONSTRAINT "alert_channels_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- One row per (tenant, rule, subject), ever: it opens (cleared_at NULL, episode
-- + 1) and clears. Opening is an INSERT … ON CONFLICT DO UPDATE … WHERE cleared_at
-- IS NOT NULL, so of two evaluators that see the same condition only one gets the
-- row back, and only that one queues the notifications.
CREATE TABLE "alert_states" (
    "tenant_id" UUID NOT NULL,
    "rule" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "episode" INTEGER NOT NULL DEFAULT 1,
    "message" TEXT NOT NULL,
    "link" TEXT NOT NULL,
    "opened_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "checked_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "cleared_at" TIMESTAMPTZ(3),

    CONSTRAINT "alert_states_pkey" PRIMARY KEY ("tenant_id", "rule", "subject")
);
ALTER TABLE "alert_states" ADD CONSTRAINT "alert_states_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The notifications' outbox: queued in the transaction that opens or clears the
-- state, delivered after the commit, at least once, retried, dead when the
-- schedule runs out. Separate from the receipts' outbox: a dead notification
-- must not count as a dead receipt (which is itself an alert rule) nor be offered
-- on the dead-receipts page. The unique key is the exactly-once guard: one row per
-- channel, state episode and transition whatever the evaluators do.
CREATE TABLE "alert_notifications" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "rule" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "episode" INTEGER NOT NULL,
    "transition" "AlertTransition" NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "available_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "dead_at" TIMESTAMPTZ(3),

    CONSTRAINT "alert_notifications_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "alert_notifications_once_key" ON "alert_notifications"("channel_id", "tenant_id", "rule", "subject", "episode", "transition");
CREATE INDEX "alert_notifications_sent_at_available_at_idx" ON "alert_notifications"("sent_at", "available_at");
ALTER TABLE "alert_notifications" ADD CONSTRAINT "alert_notifications_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "alert_channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "alert_notifications" ADD CONSTRAINT "alert_notifications_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
