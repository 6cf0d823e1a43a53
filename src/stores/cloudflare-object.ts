/*
 * The Durable Object behind DurableObjectDedupeStore: one object per dedupe key, holding one record, a lease
 * ({ token, leaseEnd }) or a completion ({ done }), each with the time it may be forgotten. Cloudflare runs one
 * instance of an object at a time and holds its other events back while a storage call is under way (its input
 * gate), so each operation's read and write are one atomic step, whichever Worker isolate the call came from.
 * The object's own clock decides expiry, so Workers in different places agree. An alarm at the record's end
 * deletes the object's storage: a completion is forgotten after its retention, a lease nobody settled after two
 * leases (an expired lease nobody took over still belongs to its owner, as in the other stores).
 */

/** The part of a Durable Object's storage this object uses (Cloudflare's `DurableObjectStorage`). */
export interface DedupeObjectStorage {
  get<T>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  deleteAll(): Promise<unknown>;
  setAlarm(scheduledTime: number): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** The part of a Durable Object's state this object uses (Cloudflare's `DurableObjectState`). */
export interface DedupeObjectState {
  readonly storage: DedupeObjectStorage;
}

type DedupeRecord = { token: string; leaseEnd: number; until: number } | { done: true; until: number };

/** What the object answers each operation: the claim's outcome, or whether the owner's settle took effect. */
export type DedupeObjectReply =
  | { claimed: true }
  | { duplicate: true }
  | { inFlightMs: number }
  | { owned: boolean };

const RECORD = 'record';

/**
 * Export it from your Worker under the class name your `wrangler.toml` binds (see the Workers guide). It is
 * driven by DurableObjectDedupeStore; its fetch answers that store's four operations and nothing else.
 */
export class DedupeDurableObject {
  readonly #storage: DedupeObjectStorage;

  constructor(state: DedupeObjectState, _env?: unknown) {
    this.#storage = state.storage;
  }

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const operation = url.pathname.slice(1);
    const token = url.searchParams.get('token') ?? '';
    const ms = Number(url.searchParams.get('ms'));
    if (token === '' || !Number.isFinite(ms) || ms < 0 || !(operation in OPERATIONS)) {
      return new Response('Not an operation of DurableObjectDedupeStore.', { status: 400 });
    }
    const stored = await this.#storage.get<DedupeRecord>(RECORD);
    const now = Date.now();
    const record = stored !== undefined && stored.until > now ? stored : undefined;
    const { reply, write } = OPERATIONS[operation as Operation](record, token, ms, now);
    if (write === null) {
      await this.#storage.deleteAlarm();
      await this.#storage.deleteAll();
    } else if (write !== undefined) {
      await this.#storage.put(RECORD, write);
      await this.#storage.setAlarm(write.until);
    }
    return Response.json(reply);
  }

  /** Forgets the record once its time is over; a record that was extended since sets the alarm again. */
  async alarm(): Promise<void> {
    const record = await this.#storage.get<DedupeRecord>(RECORD);
    if (record !== undefined && record.until > Date.now()) {
      await this.#storage.setAlarm(record.until);
      return;
    }
    await this.#storage.deleteAll();
  }
}

/** One operation: its reply, and the record to write (null: delete it, undefined: leave it). */
type Step = { reply: DedupeObjectReply; write?: DedupeRecord | null };
type Operation = 'claim' | 'complete' | 'renew' | 'release';

const owns = (record: DedupeRecord | undefined, token: string): boolean =>
  record !== undefined && 'token' in record && record.token === token;

const lease = (token: string, leaseMs: number, now: number): DedupeRecord => ({
  token,
  leaseEnd: now + leaseMs,
  until: now + 2 * leaseMs,
});

const OPERATIONS: Record<
  Operation,
  (record: DedupeRecord | undefined, token: string, ms: number, now: number) => Step
> = {
  claim(record, token, leaseMs, now) {
    if (record !== undefined && 'done' in record) return { reply: { duplicate: true } };
    if (record !== undefined && record.leaseEnd > now)
      return { reply: { inFlightMs: record.leaseEnd - now } };
    return { reply: { claimed: true }, write: lease(token, leaseMs, now) };
  },
  complete(record, token, retentionMs, now) {
    if (!owns(record, token)) return { reply: { owned: false } };
    return { reply: { owned: true }, write: { done: true, until: now + retentionMs } };
  },
  renew(record, token, leaseMs, now) {
    if (!owns(record, token)) return { reply: { owned: false } };
    return { reply: { owned: true }, write: lease(token, leaseMs, now) };
  },
  release(record, token) {
    if (!owns(record, token)) return { reply: { owned: false } };
    return { reply: { owned: true }, write: null };
  },
};
