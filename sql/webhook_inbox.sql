-- The inbox of messaging-webhooks' PostgresDedupeStore (default table name). store.migrate() runs the same.
-- One row per event key. expires_at: the lease end while state = 'processing' (the claim protects the event
-- in progress), the retention end once 'completed' (retries are answered as duplicates until then).
-- Rows past expires_at are taken over by the next claim; store.purgeExpired() deletes old ones.
CREATE TABLE IF NOT EXISTS "webhook_inbox" (
  key text PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('processing', 'completed')),
  token text,
  expires_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS "webhook_inbox_expires_at_idx" ON "webhook_inbox" (expires_at);
