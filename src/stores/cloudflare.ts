import { kindOf, WebhookConfigError } from '../base/errors.js';
import type { DedupeObjectReply } from './cloudflare-object.js';
import { operationTimeout, StoreTimeoutError, withinOperationTimeout } from './deadline.js';
import { wellFormedKey } from './lossless-key.js';
import { newOwnerToken } from './owner-token.js';
import type { ClaimResult, DedupeStore } from './types.js';

export {
  DedupeDurableObject,
  type DedupeObjectState,
  type DedupeObjectStorage,
} from './cloudflare-object.js';

/** What a Durable Object stub's fetch answers, as far as the store reads it. */
export interface DedupeObjectResponse {
  readonly status: number;
  text(): Promise<string>;
}

/**
 * The part of a Durable Object namespace binding the store uses (Cloudflare's `DurableObjectNamespace`, the
 * `env` binding of the `DedupeDurableObject` class).
 */
export interface DedupeObjectNamespace<Id = unknown> {
  idFromName(name: string): Id;
  get(id: Id): { fetch(url: string, init: { method: string }): Promise<DedupeObjectResponse> };
}

export interface DurableObjectDedupeStoreOptions {
  /** The Durable Object namespace binding of `DedupeDurableObject`, from the Worker's `env`. */
  // biome-ignore lint/suspicious/noExplicitAny: Cloudflare's id type is the binding's own
  namespace: DedupeObjectNamespace<any>;
  /**
   * Longest wait for one operation (milliseconds, default 3000). Past it the operation rejects and the event
   * is answered 503 store_unavailable, so the service retries it.
   */
  operationTimeoutMs?: number;
}

const STORE = 'The Durable Object store';

/**
 * Dedupe store for Cloudflare Workers: every key lives in its own Durable Object (`DedupeDurableObject`),
 * so copies of an event that reach different isolates, or different locations, meet in one place, and no
 * object is a bottleneck for the others. Each operation is one request to that object.
 *
 * An object that cannot be reached (an error, an overloaded object) makes the operation throw, so the
 * receiver answers 503 store_unavailable and the service retries later: fail closed.
 */
export class DurableObjectDedupeStore implements DedupeStore {
  readonly operationTimeoutMs: number;
  // biome-ignore lint/suspicious/noExplicitAny: see the option
  readonly #namespace: DedupeObjectNamespace<any>;

  constructor(options: DurableObjectDedupeStoreOptions) {
    const namespace = options?.namespace;
    if (
      typeof namespace !== 'object' ||
      namespace === null ||
      typeof namespace.idFromName !== 'function' ||
      typeof namespace.get !== 'function'
    ) {
      throw new WebhookConfigError(
        'new DurableObjectDedupeStore({ namespace }) needs the Durable Object namespace binding of ' +
          `DedupeDurableObject (env.<binding> in wrangler.toml's durable_objects), got ${kindOf(namespace)}.`,
      );
    }
    this.#namespace = namespace;
    this.operationTimeoutMs = operationTimeout('DurableObjectDedupeStore', options.operationTimeoutMs);
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const token = newOwnerToken();
    const reply = await this.#operation(key, 'claim', token, leaseMs);
    if ('claimed' in reply) return { status: 'claimed', token };
    if ('duplicate' in reply) return { status: 'duplicate' };
    if ('inFlightMs' in reply) return { status: 'in_flight', retryAfterMs: reply.inFlightMs };
    throw unexpected(reply);
  }

  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    return owned(await this.#operation(key, 'complete', token, retentionMs));
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return owned(await this.#operation(key, 'renew', token, leaseMs));
  }

  async release(key: string, token: string): Promise<boolean> {
    return owned(await this.#operation(key, 'release', token, 0));
  }

  /**
   * One request to the key's object within operationTimeoutMs. A claim this side stopped waiting for may
   * still take the key, and its lease would answer every retry 409 for a whole lease: once that request
   * settles, a release drops the lease by its token (it changes nothing when the claim never ran).
   */
  #operation(key: string, operation: string, token: string, ms: number): Promise<DedupeObjectReply> {
    let request: Promise<DedupeObjectReply> | undefined;
    const answer = withinOperationTimeout(this.operationTimeoutMs, STORE, () => {
      request = this.#send(key, operation, token, ms);
      return request;
    });
    if (operation !== 'claim') return answer;
    return answer.catch((error: unknown) => {
      if (error instanceof StoreTimeoutError) {
        request?.finally(() => this.release(key, token).catch(() => {})).catch(() => {});
      }
      throw error;
    });
  }

  async #send(key: string, operation: string, token: string, ms: number): Promise<DedupeObjectReply> {
    const stub = this.#namespace.get(this.#namespace.idFromName(wellFormedKey(key)));
    const query = `token=${encodeURIComponent(token)}&ms=${Math.ceil(ms)}`;
    const response = await stub.fetch(`https://dedupe.object/${operation}?${query}`, { method: 'POST' });
    const text = await response.text();
    if (response.status !== 200) {
      throw new Error(
        `${STORE} answered ${response.status} to ${operation}: is the binding's class DedupeDurableObject ` +
          'from messaging-webhooks/cloudflare?',
      );
    }
    return JSON.parse(text) as DedupeObjectReply;
  }
}

function owned(reply: DedupeObjectReply): boolean {
  if ('owned' in reply) return reply.owned;
  throw unexpected(reply);
}

const unexpected = (reply: unknown) =>
  new Error(
    `${STORE} answered ${kindOf(reply)}, not one of its replies: is the binding's class DedupeDurableObject?`,
  );
