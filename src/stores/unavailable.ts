/**
 * The store failed, not the handler: its connection dropped, or the server is failing over (read-only, in
 * recovery, shutting down). Nothing of the event committed; it is answered 503 with Retry-After and retried.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

/**
 * A write the primary holds but fewer replicas than `waitForReplicas.count` acknowledged in time: a failover
 * now could lose it, so it is never acknowledged with a 2xx (503 with Retry-After; the retry finds it done).
 */
export class ReplicasBehindError extends StoreUnavailableError {
  override name = 'ReplicasBehindError';
  /** True when `waitForReplicas.whenFewer` is `accept`: the write is acknowledged all the same. */
  readonly accepted: boolean;
  constructor(message: string, options: { accepted: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.accepted = options.accepted;
  }
}

/**
 * SQLSTATEs of a PostgreSQL that is going away or cannot take writes: connection exceptions (class 08),
 * admin_shutdown, crash_shutdown, cannot_connect_now (starting up or in recovery), read_only_sql_transaction
 * (a standby, or a demoted primary behind a proxy), and idle_session_timeout.
 */
const FAILOVER_STATES = new Set(['57P01', '57P02', '57P03', '25006', '57P05']);
/** What Node says when the socket itself failed. */
const SOCKET_ERRORS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/** True when `error`, or one of its causes, says the PostgreSQL server went away or cannot write. */
export function isPostgresFailover(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (
      typeof code === 'string' &&
      (code.startsWith('08') || FAILOVER_STATES.has(code) || SOCKET_ERRORS.has(code))
    )
      return true;
    if (/^Connection terminated/.test(String((cause as Error).message))) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}
