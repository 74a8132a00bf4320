-- CreateTable
CREATE TABLE "raw_event_queue" (
    "raw_event_id" BIGINT NOT NULL,
    "enqueued_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "raw_event_queue_pkey" PRIMARY KEY ("raw_event_id")
);

-- AddForeignKey
ALTER TABLE "raw_event_queue" ADD CONSTRAINT "raw_event_queue_raw_event_id_fkey" FOREIGN KEY ("raw_event_id") REFERENCES "raw_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The queue follows raw_events.status, held by the database so that every path
-- that stores an event or sends one back (ingest, reconciliation's fetch,
-- reprocess, a test's INSERT) queues it, and every outcome takes it off.
CREATE FUNCTION tally_raw_event_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO raw_event_queue (raw_event_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE FUNCTION tally_raw_event_dequeue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM raw_event_queue WHERE raw_event_id = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER raw_events_enqueue_on_insert AFTER INSERT ON raw_events
  FOR EACH ROW WHEN (NEW.status = 'RECEIVED') EXECUTE FUNCTION tally_raw_event_enqueue();
CREATE TRIGGER raw_events_enqueue_on_update AFTER UPDATE OF status ON raw_events
  FOR EACH ROW WHEN (NEW.status = 'RECEIVED' AND OLD.status <> 'RECEIVED') EXECUTE FUNCTION tally_raw_event_enqueue();
CREATE TRIGGER raw_events_dequeue AFTER UPDATE OF status ON raw_events
  FOR EACH ROW WHEN (OLD.status = 'RECEIVED' AND NEW.status <> 'RECEIVED') EXECUTE FUNCTION tally_raw_event_dequeue();

-- Events already waiting when this migration runs.
INSERT INTO raw_event_queue (raw_event_id, enqueued_at) SELECT id, received_at FROM raw_events WHERE status = 'RECEIVED';

-- A small table with constant churn: vacuum it by the number of dead rows, not by
-- a share of its size, so its index stays as small as the backlog.
ALTER TABLE raw_event_queue SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
