-- The inbox of messaging-webhooks' MysqlDedupeStore on MySQL 8 or MariaDB 10.6+ (default table name); store.migrate()
-- runs the same. One row per event key, compared byte for byte. expires_at (UTC): the lease end while
-- state = 'processing', the retention end once 'completed'. Rows past expires_at are taken over by the next
-- claim; store.purgeExpired() deletes old ones.
CREATE TABLE IF NOT EXISTS `webhook_inbox` (
  `key` VARBINARY(255) NOT NULL PRIMARY KEY,
  state VARCHAR(10) NOT NULL,
  token VARCHAR(64) NULL,
  expires_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  INDEX `webhook_inbox_expires_at_idx` (expires_at)
) ENGINE=InnoDB;
