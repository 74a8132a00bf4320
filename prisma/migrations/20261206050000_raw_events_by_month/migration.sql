-- raw_events, partitioned by month (issue #21.4), and raw bodies that can be
-- removed after a tenant's retention while their hash, claims and postings stay.
--
-- The partition key is the id, and the id tells the time: (milliseconds since
-- 1970 << 20) | (a sequence modulo 2^20). PostgreSQL requires every unique key of a
-- partitioned table to contain the partition key; with the month inside the id,
-- the primary key stays (id) alone, and every foreign key that references
-- raw_events(id) (claims, queue, conflicts, bulk items, duplicates) is unchanged.
-- Partitioning by received_at instead would have made the key (id, received_at)
-- and every referencing table carry received_at. Ids still grow with time, so the
-- worker's pick-up order and the lists' id cursors mean what they meant. Two ids
-- collide only if 2^20 ids are drawn within one millisecond. Ids reach 2^63 in 2248.
--
-- Rows stored before this migration keep their small sequence ids and stay, as
-- they are, in one partition (raw_events_before_partitioning) below every new id:
-- ATTACH PARTITION checks them in place, nothing is copied or renumbered.

-- ---------------------------------------------------------------- ids that tell the time
CREATE SEQUENCE IF NOT EXISTS raw_events_id_seq;

CREATE FUNCTION tally_raw_event_id_floor(at timestamptz) RETURNS bigint
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT (floor(extract(epoch FROM at) * 1000)::bigint) << 20 $$;

CREATE FUNCTION tally_raw_event_id_at(at timestamptz) RETURNS bigint
  LANGUAGE sql VOLATILE
  AS $$ SELECT tally_raw_event_id_floor(at) | (nextval('raw_events_id_seq') & 1048575) $$;

-- clock_timestamp(), not now(): ids drawn inside one long transaction still grow.
CREATE FUNCTION tally_raw_event_id() RETURNS bigint
  LANGUAGE sql VOLATILE
  AS $$ SELECT tally_raw_event_id_at(clock_timestamp()) $$;

-- ---------------------------------------------------------------- bodies that can be removed
ALTER TABLE "raw_events" ADD COLUMN "body_sha256" BYTEA;
ALTER TABLE "raw_events" ADD COLUMN "body_purged_at" TIMESTAMPTZ(3);
UPDATE "raw_events" SET "body_sha256" = sha256("raw_body");
ALTER TABLE "raw_events" ALTER COLUMN "body_sha256" SET NOT NULL;
ALTER TABLE "raw_events" ALTER COLUMN "raw_body" DROP NOT NULL;
ALTER TABLE "raw_events" ADD CONSTRAINT "raw_events_body_or_its_purge" CHECK (("raw_body" IS NULL) = ("body_purged_at" IS NOT NULL));
-- An event still to be worked is never without its body: the worker parses it.
ALTER TABLE "raw_events" ADD CONSTRAINT "raw_events_worked_has_body" CHECK ("raw_body" IS NOT NULL OR "status" NOT IN ('RECEIVED', 'CLAIMED'));

-- ---------------------------------------------------------------- the parent table
-- What cannot stay as it is on a partitioned table, dropped here and made again below.
ALTER TABLE "raw_events" DROP CONSTRAINT "raw_events_duplicate_of_id_fkey";
ALTER TABLE "processed_events" DROP CONSTRAINT "processed_events_raw_event_id_fkey";
ALTER TABLE "raw_event_queue" DROP CONSTRAINT "raw_event_queue_raw_event_id_fkey";
ALTER TABLE "claim_conflicts" DROP CONSTRAINT "claim_conflicts_raw_event_id_fkey";
ALTER TABLE "bulk_reprocess_items" DROP CONSTRAINT "bulk_reprocess_items_raw_event_id_fkey";
ALTER TABLE "raw_events" DROP CONSTRAINT "raw_events_tenant_id_fkey";
DROP TRIGGER raw_events_enqueue_on_insert ON raw_events;
DROP TRIGGER raw_events_enqueue_on_update ON raw_events;
DROP TRIGGER raw_events_dequeue ON raw_events;
-- A unique index on a partitioned table must contain the id, which would make it
-- useless; one transmission, one body is held by raw_event_transmissions below.
DROP INDEX "raw_events_paypal_transmission_key";
ALTER TABLE "raw_events" ALTER COLUMN "id" DROP DEFAULT;
ALTER SEQUENCE "raw_events_id_seq" OWNED BY NONE;

ALTER TABLE "raw_events" RENAME TO "raw_events_before_partitioning";
ALTER TABLE "raw_events_before_partitioning" RENAME CONSTRAINT "raw_events_pkey" TO "raw_events_before_partitioning_pkey";
-- Its indexes keep their contents and are adopted by the parent's at ATTACH (no rebuild).
ALTER INDEX "raw_events_status_id_idx" RENAME TO "raw_events_before_partitioning_status_id_idx";
ALTER INDEX "raw_events_tenant_id_received_at_idx" RENAME TO "raw_events_before_partitioning_tenant_id_received_at_idx";
ALTER INDEX "raw_events_movement_references_idx" RENAME TO "raw_events_before_partitioning_movement_references_idx";

CREATE TABLE "raw_events" (LIKE "raw_events_before_partitioning" INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE ("id");
ALTER TABLE "raw_events" ALTER COLUMN "id" SET DEFAULT tally_raw_event_id();
ALTER SEQUENCE "raw_events_id_seq" OWNED BY "raw_events"."id";
ALTER TABLE "raw_events" ADD CONSTRAINT "raw_events_pkey" PRIMARY KEY ("id");
CREATE INDEX "raw_events_status_id_idx" ON "raw_events"("status", "id");
CREATE INDEX "raw_events_tenant_id_received_at_idx" ON "raw_events"("tenant_id", "received_at");
CREATE INDEX "raw_events_movement_references_idx" ON "raw_events" USING GIN ("movement_references");

-- The rows already stored: one partition below every new id (its bound is the
-- largest old id + 1, so every month from 1970 on can still get its own partition).
DO $$
DECLARE upper_bound bigint;
BEGIN
  SELECT coalesce(max(id), 0) + 1 INTO upper_bound FROM raw_events_before_partitioning;
  EXECUTE format('ALTER TABLE raw_events ATTACH PARTITION raw_events_before_partitioning FOR VALUES FROM (MINVALUE) TO (%s)', upper_bound);
END $$;

ALTER TABLE "raw_events" ADD CONSTRAINT "raw_events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "raw_events" ADD CONSTRAINT "raw_events_duplicate_of_id_fkey" FOREIGN KEY ("duplicate_of_id") REFERENCES "raw_events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "processed_events" ADD CONSTRAINT "processed_events_raw_event_id_fkey" FOREIGN KEY ("raw_event_id") REFERENCES "raw_events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "raw_event_queue" ADD CONSTRAINT "raw_event_queue_raw_event_id_fkey" FOREIGN KEY ("raw_event_id") REFERENCES "raw_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "claim_conflicts" ADD CONSTRAINT "claim_conflicts_raw_event_id_fkey" FOREIGN KEY ("raw_event_id") REFERENCES "raw_events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "bulk_reprocess_items" ADD CONSTRAINT "bulk_reprocess_items_raw_event_id_fkey" FOREIGN KEY ("raw_event_id") REFERENCES "raw_events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TRIGGER raw_events_enqueue_on_insert AFTER INSERT ON raw_events
  FOR EACH ROW WHEN (NEW.status = 'RECEIVED') EXECUTE FUNCTION tally_raw_event_enqueue();
CREATE TRIGGER raw_events_enqueue_on_update AFTER UPDATE OF status ON raw_events
  FOR EACH ROW WHEN (NEW.status = 'RECEIVED' AND OLD.status <> 'RECEIVED') EXECUTE FUNCTION tally_raw_event_enqueue();
CREATE TRIGGER raw_events_dequeue AFTER UPDATE OF status ON raw_events
  FOR EACH ROW WHEN (OLD.status = 'RECEIVED' AND NEW.status <> 'RECEIVED') EXECUTE FUNCTION tally_raw_event_dequeue();

-- ---------------------------------------------------------------- the body: hashed once, never rewritten
-- One PayPal transmission, one stored body (was the partial unique index of
-- 20261204150000_paypal_transmission_once). PayPal signs only a CRC-32 of the body,
-- which a forged body can match; a second body under a stored transmission id must
-- be refused. The row of the first body is recorded here; a later INSERT of the same
-- transmission is skipped (RETURN NULL), which the ack path sees as no row returned,
-- exactly as it saw ON CONFLICT DO NOTHING before.
CREATE TABLE "raw_event_transmissions" (
    "tenant_id" UUID NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "raw_event_id" BIGINT NOT NULL,
    "body_sha256" BYTEA NOT NULL,

    CONSTRAINT "raw_event_transmissions_pkey" PRIMARY KEY ("tenant_id","delivery_id")
);
INSERT INTO raw_event_transmissions (tenant_id, delivery_id, raw_event_id, body_sha256)
  SELECT DISTINCT ON (tenant_id, delivery_id) tenant_id, delivery_id, id, body_sha256
  FROM raw_events WHERE provider = 'paypal' AND delivery_id IS NOT NULL ORDER BY tenant_id, delivery_id, id;

CREATE FUNCTION tally_raw_event_stored() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.body_sha256 := sha256(NEW.raw_body);
  IF NEW.provider = 'paypal' AND NEW.delivery_id IS NOT NULL THEN
    INSERT INTO raw_event_transmissions (tenant_id, delivery_id, raw_event_id, body_sha256)
      VALUES (NEW.tenant_id, NEW.delivery_id, NEW.id, NEW.body_sha256)
      ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN RETURN NULL; END IF;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER raw_events_stored BEFORE INSERT ON raw_events
  FOR EACH ROW EXECUTE FUNCTION tally_raw_event_stored();

-- Bytes are stored untouched: the only change a body may see is its removal.
CREATE FUNCTION tally_raw_event_body_untouched() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.body_sha256 IS DISTINCT FROM OLD.body_sha256
     OR (NEW.raw_body IS NOT NULL AND NEW.raw_body IS DISTINCT FROM OLD.raw_body) THEN
    RAISE EXCEPTION 'raw event %: a stored body is never rewritten, only removed after its retention', OLD.id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER raw_events_body_untouched BEFORE UPDATE OF raw_body, body_sha256 ON raw_events
  FOR EACH ROW EXECUTE FUNCTION tally_raw_event_body_untouched();

-- ---------------------------------------------------------------- one partition per month
-- Made by the migration for this month and the next three, then by the worker's
-- maintenance job ahead of time (TALLY_RAW_EVENT_MONTHS_AHEAD). There is no DEFAULT
-- partition: with one, every new month's CREATE would have to scan it and fail if
-- a row had strayed there; without one, a missing month refuses the INSERT, which
-- the ack path answers 503 (the provider retries) and the worker's gauge shows.
CREATE FUNCTION tally_create_raw_event_partition(month date) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  first_day date := date_trunc('month', month)::date;
  name text := format('raw_events_y%sm%s', to_char(first_day, 'YYYY'), to_char(first_day, 'MM'));
BEGIN
  -- Replicas and the migration may try the same month at once.
  PERFORM pg_advisory_xact_lock(hashtext('tally_raw_event_partitions'));
  IF to_regclass(name) IS NOT NULL THEN
    IF EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass(name) AND inhparent = 'raw_events'::regclass) THEN
      RETURN NULL;
    END IF;
    -- A detached month (an operator's archive, say) is never taken back or shadowed silently.
    RAISE EXCEPTION 'table % exists but is not a partition of raw_events: attach or rename it by hand', name;
  END IF;
  -- Made apart and attached: ATTACH takes SHARE UPDATE EXCLUSIVE on raw_events,
  -- which inserts pass, but the tables whose keys reference raw_events are locked
  -- briefly while their keys learn the new partition. Behind a long transaction
  -- this gives up after 5 s (and tries again at the next run) rather than queue
  -- the worker's commits behind it.
  SET LOCAL lock_timeout = '5s';
  EXECUTE format('CREATE TABLE %I (LIKE raw_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
  EXECUTE format(
    'ALTER TABLE raw_events ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)',
    name,
    tally_raw_event_id_floor(first_day::timestamp AT TIME ZONE 'UTC'),
    tally_raw_event_id_floor((first_day + interval '1 month')::timestamp AT TIME ZONE 'UTC')
  );
  RETURN name;
END $$;

CREATE FUNCTION tally_ensure_raw_event_partitions(months_ahead int) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT made FROM generate_series(0, months_ahead) AS ahead,
    LATERAL tally_create_raw_event_partition((date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => ahead))::date) AS made
  WHERE made IS NOT NULL
$$;

SELECT tally_ensure_raw_event_partitions(3);

-- ---------------------------------------------------------------- retention per tenant
ALTER TABLE "tenants" ADD COLUMN "raw_body_retention_days" INTEGER NOT NULL DEFAULT 400;
-- Bodies received before this instant have been removed (where they could be): the
-- retention job starts its next pass here instead of at the start of time.
ALTER TABLE "tenants" ADD COLUMN "raw_bodies_purged_before" TIMESTAMPTZ(3);
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_raw_body_retention_days_range" CHECK ("raw_body_retention_days" BETWEEN 30 AND 36500);
