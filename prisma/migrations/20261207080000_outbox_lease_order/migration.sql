-- The dispatcher leases the receipts that became available first. Its old query took the
-- unsent rows through (sent_at, available_at), all of them, and sorted them by id for
-- every lease: with 100,000 receipts waiting (bench:worker) the lease was the busiest
-- statement of the drain, 1,357 of 1,404 samples in one pass. This index hands them over in
-- order and stops after the batch; rows leased or backing off sit at its far end.
CREATE INDEX "outbox_unsent_available_at_id_idx" ON "outbox" ("available_at", "id")
  WHERE "sent_at" IS NULL AND "dead_at" IS NULL;
