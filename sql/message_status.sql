-- The status table of messaging-webhooks' PostgresStatusStore (default table name). store.migrate() runs the same.
-- One row per message: record is the tracker's record (status, history, operator, times) as JSON; version grows
-- by one with each write, and a write lands only over the version its writer read (compare and set).
-- final_at: when the row became final; store.purgeExpired() deletes final rows past retentionMs.
CREATE TABLE IF NOT EXISTS "message_status" (
  message_id text PRIMARY KEY,
  version integer NOT NULL,
  status text NOT NULL,
  final boolean NOT NULL,
  expected_at bigint NOT NULL,
  final_at timestamptz,
  record jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS "message_status_open_idx" ON "message_status" (expected_at) WHERE NOT final;
CREATE INDEX IF NOT EXISTS "message_status_final_at_idx" ON "message_status" (final_at) WHERE final;
