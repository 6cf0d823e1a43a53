import { type Deadline, withinOperationTimeout } from './deadline.js';
import type { RedisLink, Send } from './redis-client.js';
import type { WaitForReplicas } from './replicas.js';
import { ReplicasBehindError } from './unavailable.js';

/** A write whose replicas are counted: run on the connection `send` sends on; resolves the script's reply. */
export type ReplicatedWrite = (send: Send, deadline: Deadline) => Promise<number>;

interface Pending {
  readonly key: string;
  readonly write: ReplicatedWrite;
  resolve(reply: number): void;
  reject(error: unknown): void;
}

/** How long a count of connected replicas is trusted while too few were seen, before ROLE is asked again. */
const RECHECK_MS = 1000;

const STORE = 'The Redis store';

/**
 * The store's writes that must be on `count` replicas before their event is acknowledged (waitForReplicas).
 *
 * Writes share WAITs: WAIT answers for every earlier write of its connection, so on a link to one server the
 * writes that come while a flight is out wait for the next flight, which runs them all on one connection, then
 * one WAIT. A Cluster's writes go to their slots' masters: each runs alone, with a WAIT of its own.
 *
 * It also knows when the primary has fewer connected replicas than asked (ROLE): at first use, and again once a
 * WAIT answered too few, a new event is then refused before its handlers run (503 store_unavailable, nothing
 * processed), until the replicas are back. A replica that is briefly down refuses events only while it is down.
 * Not on a Cluster, whose masters each count their own replicas.
 */
export class RedisReplicas {
  readonly #link: RedisLink;
  readonly #wait: Required<WaitForReplicas>;
  readonly #timeoutMs: number;
  #queued: Pending[] = [];
  #flying = false;
  /** Replicas ROLE last showed connected (undefined: it could not tell), and until when that is trusted. */
  #connected: { count: number | undefined; until: number } | undefined;

  constructor(link: RedisLink, wait: Required<WaitForReplicas>, operationTimeoutMs: number) {
    this.#link = link;
    this.#wait = wait;
    this.#timeoutMs = operationTimeoutMs;
  }

  /** Runs `write` on `key`, and resolves its reply once `count` replicas hold it (else ReplicasBehindError). */
  confirm(key: string, write: ReplicatedWrite): Promise<number> {
    if (!this.#link.oneServer) return this.#fly([key], [write]).then(([reply]) => reply as number);
    return new Promise((resolve, reject) => {
      this.#queued.push({ key, write, resolve, reject });
      if (!this.#flying) void this.#flights();
    });
  }

  /**
   * Why a new event must not be claimed now: the primary has fewer connected replicas than asked (ROLE), so its
   * completion could not be acknowledged. Undefined when it has enough, when `whenFewer` is `accept`, or when
   * ROLE cannot be asked (refused, say by an ACL): then the WAIT after the completion decides.
   */
  async missing(key: string): Promise<string | undefined> {
    // A Cluster's masters each have replicas of their own: there the WAIT after each completion decides.
    if (this.#wait.whenFewer === 'accept' || !this.#link.oneServer) return undefined;
    const wanted = this.#wait.count;
    let known = this.#connected;
    if (known === undefined || known.until <= performance.now()) {
      const count = await this.#connectedReplicas(key);
      // Enough: trusted until a WAIT answers too few. Too few, or not known: looked at again after a while.
      const until =
        count !== undefined && count >= wanted ? Number.POSITIVE_INFINITY : performance.now() + RECHECK_MS;
      known = { count, until };
      this.#connected = known;
    }
    const { count } = known;
    if (count === undefined || count >= wanted) return undefined;
    return (
      `The Redis primary has ${count} connected replicas and waitForReplicas asks for ${wanted}: the event was ` +
      'not processed (its completion could not be acknowledged) and is answered 503 until enough replicas are ' +
      'connected. Check the replicas, or lower waitForReplicas.count.'
    );
  }

  async #flights(): Promise<void> {
    this.#flying = true;
    while (this.#queued.length > 0) {
      const batch = this.#queued;
      this.#queued = [];
      const replies = this.#fly(
        batch.map((pending) => pending.key),
        batch.map((pending) => pending.write),
      );
      await replies.then(
        (each) => {
          batch.forEach((pending, i) => {
            const reply = each[i] as number | { error: unknown };
            if (typeof reply === 'number') pending.resolve(reply);
            else pending.reject(reply.error);
          });
        },
        (error: unknown) => {
          for (const pending of batch) pending.reject(error);
        },
      );
    }
    this.#flying = false;
  }

  /** The writes on one connection, then one WAIT for all of them, within one operation's deadline. */
  #fly(keys: string[], writes: ReplicatedWrite[]): Promise<(number | { error: unknown })[]> {
    // One server: the client's own connection (a Sentinel client's one master connection, masterPoolSize 1),
    // which every command of the store shares; a lease of it would wait for a moment with none in flight.
    const pinned = (deadline: Deadline) => (this.#link.oneServer ? undefined : deadline);
    return withinOperationTimeout(this.#timeoutMs, STORE, (deadline) =>
      this.#link.session(
        keys[0] as string,
        async (send) => {
          const replies = await Promise.allSettled(writes.map((write) => write(send, deadline)));
          const waitMs = Math.max(1, Math.min(this.#wait.timeoutMs, Math.floor(deadline.remainingMs())));
          const acknowledged = Number(await send(['WAIT', String(this.#wait.count), String(waitMs)]));
          const behind = acknowledged < this.#wait.count ? this.#behind(acknowledged, waitMs) : undefined;
          return replies.map((reply) => {
            if (reply.status === 'rejected') return { error: reply.reason };
            return behind ? { error: behind } : reply.value;
          });
        },
        pinned(deadline),
      ),
    );
  }

  #behind(acknowledged: number, waitMs: number): ReplicasBehindError {
    // Fewer replicas than asked: the next claims look at how many are connected before running an event.
    this.#connected = { count: acknowledged, until: 0 };
    const { count, whenFewer } = this.#wait;
    return new ReplicasBehindError(
      `The completion of an event is on the Redis primary, but only ${acknowledged} of the ${count} replicas ` +
        `asked for (waitForReplicas) held it within ${waitMs} ms: a failover now could lose it. ` +
        (whenFewer === 'accept'
          ? 'It was acknowledged all the same (whenFewer: accept).'
          : 'It is answered 503 not_replicated until they hold it; check that the replicas are up and in sync.'),
      { accepted: whenFewer === 'accept' },
    );
  }

  /**
   * Replicas connected to the primary serving `key`, from ROLE; undefined when ROLE is refused (an ACL) or fails
   * (the claim after it then meets the same trouble, and the WAIT after a completion still decides).
   */
  async #connectedReplicas(key: string): Promise<number | undefined> {
    let role: unknown;
    try {
      role = await withinOperationTimeout(this.#timeoutMs, STORE, (deadline) =>
        this.#link.session(key, (send) => send(['ROLE']), this.#link.oneServer ? undefined : deadline),
      );
    } catch {
      return undefined;
    }
    if (!Array.isArray(role)) return undefined;
    // ['master', offset, [[host, port, offset], …]]; a replica answers 'slave' (a primary demoted meanwhile).
    return String(role[0]) === 'master' && Array.isArray(role[2]) ? role[2].length : 0;
  }
}
