-- A dispute held because its payment's refunds and disputes (less what disputes gave
-- back) would pass the payment was recorded as OVER_REFUND, which names a refund the
-- merchant made. It gets its own kind; a held refund stays OVER_REFUND. Rows recorded
-- before this keep their kind: a value added by ALTER TYPE cannot be used in the
-- transaction that adds it, and the migration runs in one.
ALTER TYPE "ConflictKind" ADD VALUE 'OVER_WITHDRAWAL';
