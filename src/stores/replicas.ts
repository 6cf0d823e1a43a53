import { WebhookConfigError } from '../base/errors.js';
import { ReplicasBehindError } from './unavailable.js';

/**
 * "Acknowledged" means replicated: a write is answered 2xx only once `count` replicas hold it (Redis WAIT on
 * the connection that wrote it). Costs a round trip to the replicas per acknowledged event.
 */
export interface WaitForReplicas {
  /** Replicas that must hold the write before its event is acknowledged (at least 1). */
  count: number;
  /** Longest wait for them (ms, at least 1); keep it well under the operation's deadline. */
  timeoutMs: number;
  /**
   * A write fewer than `count` replicas acknowledged in time. `'reject'` (default): answered 503 with
   * Retry-After, never 2xx; with fewer than `count` replicas left (a failover promoted one of them), every
   * delivery is answered 503 until enough replicas are back: durability first. `'accept'`: answered 2xx all the
   * same and told to onError (store_unavailable / persistence_unchecked), so deliveries go on while a second
   * failover now can lose what was acknowledged: availability first.
   */
  whenFewer?: 'reject' | 'accept';
}

/** A validated waitForReplicas option, or undefined when not asked for. */
export function replicasOption(
  owner: string,
  value: WaitForReplicas | undefined,
): Required<WaitForReplicas> | undefined {
  if (value === undefined) return undefined;
  const wrong = (what: string) =>
    new WebhookConfigError(
      `${owner}({ waitForReplicas }): ${what}. Example: waitForReplicas: { count: 1, timeoutMs: 500 } (the ` +
        'replicas that must hold each write before it is acknowledged, and how long to wait for them).',
    );
  if (typeof value !== 'object' || value === null) throw wrong(`expected an object, got ${String(value)}`);
  const { count, timeoutMs, whenFewer = 'reject' } = value;
  if (!Number.isInteger(count) || count < 1) throw wrong(`count must be a whole number ≥ 1, got ${count}`);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw wrong(`timeoutMs must be a whole number of milliseconds ≥ 1, got ${timeoutMs}`);
  if (whenFewer !== 'reject' && whenFewer !== 'accept')
    throw wrong(`whenFewer must be 'reject' or 'accept', got ${String(whenFewer)}`);
  return { count, timeoutMs, whenFewer };
}

/**
 * Sends WAIT on the connection that just wrote, and fails with ReplicasBehindError when fewer replicas than
 * asked acknowledged within the timeout (`accepted` set when the option says to acknowledge it all the same).
 */
export async function awaitReplicas(
  send: (args: string[]) => Promise<unknown>,
  wait: Required<WaitForReplicas>,
  what: string,
): Promise<void> {
  held(Number(await send(['WAIT', String(wait.count), String(wait.timeoutMs)])), wait, what);
}

/**
 * WAITs shared by the writes of one connection: WAIT answers for every earlier write of its connection, so a
 * write that finished while one is out waits for the next one, which covers every write finished by then. One
 * WAIT out at a time, however many writes wait: a write costs a replica round trip shared with its neighbours.
 */
export function sharedReplicaWait(
  send: (args: string[]) => Promise<unknown>,
  wait: Required<WaitForReplicas>,
  what: string,
): () => Promise<void> {
  let out: Promise<number> | undefined;
  let next: Promise<number> | undefined;
  const sendWait = () => {
    const sent = Promise.resolve(send(['WAIT', String(wait.count), String(wait.timeoutMs)])).then(Number);
    out = sent;
    const done = () => {
      if (out === sent) out = undefined;
    };
    sent.then(done, done);
    return sent;
  };
  const acknowledged = () => {
    if (out === undefined) return sendWait();
    // The WAIT out may have gone before this write: the next one, sent once it is back, covers it.
    next ??= out.then(noop, noop).then(() => {
      next = undefined;
      return sendWait();
    });
    return next;
  };
  return async () => held(await acknowledged(), wait, what);
}

function noop(): void {}

function held(acknowledged: number, wait: Required<WaitForReplicas>, what: string): void {
  if (acknowledged >= wait.count) return;
  throw new ReplicasBehindError(
    `${what} is on the Redis primary, but only ${acknowledged} of the ${wait.count} replicas asked for ` +
      `(waitForReplicas) held it within ${wait.timeoutMs} ms: a failover now could lose it. ` +
      (wait.whenFewer === 'accept'
        ? 'It was acknowledged all the same (whenFewer: accept).'
        : 'It is answered 503 and retried (whenFewer: reject); check that the replicas are up and in sync.'),
    { accepted: wait.whenFewer === 'accept' },
  );
}

/**
 * A write whose replication could not be confirmed (the store failed or passed its deadline before WAIT
 * answered) is not acknowledged either, unless `whenFewer` is `accept`.
 */
export function unconfirmed(error: unknown, wait: Required<WaitForReplicas>): ReplicasBehindError {
  if (error instanceof ReplicasBehindError) return error;
  return new ReplicasBehindError(
    `Could not confirm that ${wait.count} replicas hold the write (waitForReplicas): ${String((error as Error)?.message ?? error)}`,
    { accepted: wait.whenFewer === 'accept', cause: error },
  );
}
