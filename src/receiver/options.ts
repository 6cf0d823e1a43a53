import { WebhookConfigError } from '../base/errors.js';
import { option, rules } from '../base/options.js';
import { checkTracing, type Tracing } from '../contract/tracing.js';
import type { CryptoProvider } from '../crypto/provider.js';
import type { DurableQueue } from '../durable/port.js';
import { type Catalogue, type DefaultEvents, defaultEvents } from '../events/catalogue.js';
import type { Logger } from '../observability/logger.js';
import type { TenantOf } from '../pipeline/2-tenant.js';
import { resolveProfile, type SignatureProfile, type Tolerance } from '../signature/index.js';
import type { Mode, Secrets } from '../signature/secrets.js';
import { MemoryDedupeStore } from '../stores/memory.js';
import { DEFAULT_RETENTION_MS } from '../stores/retention.js';
import type { DedupeStore } from '../stores/types.js';
import { checkTracker } from '../tracker/receiving.js';
import type { MessageTracker } from '../tracker/tracker.js';
import type { SecretsLookup, TenantSecretsOptions } from './tenant-secrets.js';

export { DEFAULT_SIGNATURE_HEADER } from '../signature/presets.js';

export interface ReceiverOptions<
  C extends Catalogue = DefaultEvents,
  S extends DedupeStore<unknown> = DedupeStore,
> {
  /**
   * One secret, a list (rotation), or per mode: { live: […], test: […] }. Takes `process.env.X` as it is:
   * an unset variable fails here, at creation, with a message that says so.
   */
  secrets: Secrets | SecretsLookup | undefined;
  /**
   * Many accounts on one receiver: the tenant a request names (from `params`, a header, the URL, or the body as a
   * lookup key only), passed to `secrets` when that is a function. Synchronous. Only together with such a
   * `secrets`. Default: one tenant, the static `secrets`.
   */
  tenant?: TenantOf;
  /** How the `secrets` lookup is cached and waited for (with `tenant`). Default: { ttlMs: 300000, negativeTtlMs: 30000, maxTenants: 10000, timeoutMs: 2000 }. */
  tenantSecrets?: TenantSecretsOptions;
  /**
   * What to do with the verified events of each mode: `'handle'` them, or `'ignore'` them (200, no handler, no
   * claim; logged as `ignored`), for example `{ test: 'ignore' }` in production. Default: handle both.
   */
  modes?: ModeHandling;
  /**
   * The signature format: defaultProfile, standardWebhooks, bodySignature(…) or createProfile(…).
   * Default: `webhook-signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>." + raw body>`.
   */
  profile?: SignatureProfile;
  /** node:crypto or Web Crypto (or your own). Default: defaultCryptoProvider(), chosen once. */
  crypto?: CryptoProvider;
  /** Name of the default profile's signature header, looked up case-insensitively. Not with `profile`. */
  signatureHeader?: string;
  /** Seconds a signature timestamp may be in the past / future. Default 300 both ways. */
  toleranceSeconds?: Tolerance;
  /** Largest body accepted. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * How long reading a body may take, from when the receiver starts reading it (milliseconds). Past it the
   * answer is 408 body_timeout and the connection is closed: a slow or stalled upload never holds a
   * connection. Default 10000.
   */
  bodyTimeoutMs?: number;
  /** Where processed events are remembered. Default: a MemoryDedupeStore (one process). */
  store?: S;
  /** The event catalogue: type → zod schema of `data`. Default: message.delivered, message.failed. */
  events?: C;
  /** How long a claim protects an event being processed; a crashed process's claim expires after it. Default 60 s. */
  leaseMs?: number;
  /** How long a processed event is remembered; must outlast the service's retry schedule. Default 7 days. */
  retentionMs?: number;
  /**
   * How long the receiver waits on any one call to the store (claim, complete, renew, release) before it counts
   * as failed: 503 store_unavailable, and onError is told. The built-in stores give up sooner, at their own
   * operationTimeoutMs (3000). Default 5000.
   */
  storeTimeoutMs?: number;
  /** Handlers running at once. Default 32. */
  concurrency?: number;
  /** Events waiting for a handler slot before new ones get 503 overloaded. Default 1024. */
  maxQueue?: number;
  /** 'sync': answer once handlers settle (default). 'async': answer 202 once verified and claimed. */
  ack?: 'sync' | 'async';
  /**
   * Answer 503 handler_timeout when an event is not settled this long after it was claimed (waiting for a
   * slot counts). Its handlers go on and settle the claim: the retry gets a duplicate or runs it again.
   * Default: no limit.
   */
  handlerTimeoutMs?: number;
  /** Retry-After (seconds) sent with 503 answers. Default 5. */
  retryAfterSeconds?: number;
  /**
   * Durable acknowledgement: verified events go to this job engine (messaging-webhooks/bullmq,
   * messaging-webhooks/pg-boss) and are answered 202 once it holds them; workers run the handlers.
   */
  queue?: DurableQueue;
  /** Serverless: keeps work alive after an async acknowledgement (per-request waitUntil wins). */
  waitUntil?: (work: Promise<unknown>) => void;
  /**
   * One line per request: pino (or any logger with `child`) gets `(fields, message)`; console, or any other
   * `{ info, warn, error }`, one text line. Default: no logging.
   */
  logger?: Logger;
  /**
   * A span per delivery, with spans for its stages and its handlers (and, in durable mode, a trace that goes
   * on in the workers): openTelemetry() from messaging-webhooks/opentelemetry. Default: no tracing.
   */
  tracing?: Tracing;
  /**
   * Each verified `message.*` event whose handlers succeeded moves its message's status forward in this tracker
   * (createMessageTracker from messaging-webhooks/tracker). Default: no tracking.
   */
  tracker?: MessageTracker;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

/** Per mode, whether its verified events run the handlers (`handle`) or are answered 200 and dropped (`ignore`). */
export type ModeHandling = { readonly [M in Mode]?: 'handle' | 'ignore' };

type OptionalOption =
  | 'tenant'
  | 'tenantSecrets'
  | 'modes'
  | 'handlerTimeoutMs'
  | 'waitUntil'
  | 'toleranceSeconds'
  | 'logger'
  | 'tracing'
  | 'queue'
  | 'crypto'
  | 'signatureHeader'
  | 'tracker';

export type ResolvedOptions<C extends Catalogue, S> = Required<
  Omit<ReceiverOptions<C, DedupeStore<unknown>>, OptionalOption>
> &
  Pick<ReceiverOptions<C>, OptionalOption> & {
    store: S;
  };

/**
 * Every numeric option is a whole number greater than 0 (maxQueue may be 0): a count, milliseconds or seconds.
 * Infinity, NaN and fractions (`concurrency: 1.5`) are refused by name, so a typo fails at startup instead of
 * bending the limits.
 */
const COUNT = rules.whole({ min: 1 });

/** Validates options at creation, so a mistake fails at startup with a message, not at the first delivery. */
export function resolveOptions<C extends Catalogue, S extends DedupeStore<unknown>>(
  options: ReceiverOptions<C, S>,
): ResolvedOptions<C, S> {
  if (typeof options !== 'object' || options === null) {
    throw new WebhookConfigError('createReceiver needs an options object: createReceiver({ secrets: … }).');
  }
  const resolved = {
    signatureHeader: options.signatureHeader,
    profile: resolveProfile(options),
    crypto: options.crypto,
    maxBodyBytes: option('maxBodyBytes', options.maxBodyBytes, 1024 * 1024, COUNT),
    bodyTimeoutMs: option('bodyTimeoutMs', options.bodyTimeoutMs, 10_000, COUNT),
    store: options.store ?? (new MemoryDedupeStore() as unknown as S),
    events: options.events ?? (defaultEvents as unknown as C),
    leaseMs: option('leaseMs', options.leaseMs, 60_000, COUNT),
    retentionMs: option('retentionMs', options.retentionMs, DEFAULT_RETENTION_MS, COUNT),
    storeTimeoutMs: option('storeTimeoutMs', options.storeTimeoutMs, 5000, COUNT),
    concurrency: option('concurrency', options.concurrency, 32, COUNT),
    maxQueue: option('maxQueue', options.maxQueue, 1024, rules.whole({ min: 0 })),
    ack: option('ack', options.ack ?? undefined, 'sync', rules.oneOf(['sync', 'async'])),
    retryAfterSeconds: option('retryAfterSeconds', options.retryAfterSeconds, 5, COUNT),
    now: options.now ?? Date.now,
    secrets: options.secrets,
    toleranceSeconds: options.toleranceSeconds,
    waitUntil: options.waitUntil,
    logger: options.logger,
    queue: options.queue,
    tracing: checkTracing(options.tracing),
    tracker: checkTracker(options.tracker),
    tenant: options.tenant,
    tenantSecrets: options.tenantSecrets,
    modes: options.modes,
    handlerTimeoutMs: option<number | undefined>(
      'handlerTimeoutMs',
      options.handlerTimeoutMs,
      undefined,
      COUNT,
    ),
  };
  const logger = resolved.logger as Partial<Logger> | undefined;
  if (
    logger !== undefined &&
    (typeof logger?.info !== 'function' ||
      typeof logger.warn !== 'function' ||
      typeof logger.error !== 'function')
  ) {
    throw new WebhookConfigError('logger must have info, warn and error methods (pino, or console-like).');
  }
  if (resolved.queue !== undefined && typeof resolved.queue?.enqueue !== 'function') {
    throw new WebhookConfigError('queue must be a DurableQueue: bullmqQueue(…) or pgBossQueue(…).');
  }
  checkTenant(resolved);
  const store = resolved.store as Partial<DedupeStore<unknown>>;
  if (
    typeof store.claim !== 'function' ||
    typeof store.complete !== 'function' ||
    typeof store.release !== 'function'
  ) {
    throw new WebhookConfigError('store must implement claim, complete and release (see DedupeStore).');
  }
  return resolved;
}

/** Which modes are ignored, or undefined when none is (the walk then checks nothing). */
export function ignoredModes(modes: ModeHandling | undefined): Readonly<Record<Mode, boolean>> | undefined {
  if (modes === undefined) return undefined;
  const rule = rules.oneOf(['handle', 'ignore']);
  if (typeof modes !== 'object' || modes === null) {
    throw new WebhookConfigError(
      "modes must be an object: { live?: 'handle' | 'ignore', test?: 'handle' | 'ignore' }.",
    );
  }
  for (const name of Object.keys(modes)) {
    if (name !== 'live' && name !== 'test') {
      throw new WebhookConfigError(`modes takes live and test, not ${JSON.stringify(name)}.`);
    }
  }
  const live = option('modes.live', modes.live, 'handle', rule) === 'ignore';
  const test = option('modes.test', modes.test, 'handle', rule) === 'ignore';
  return live || test ? { live, test } : undefined;
}

/** `tenant` and a `secrets` function go together: one without the other is a mistake. */
function checkTenant(options: { tenant?: unknown; secrets: unknown }): void {
  const lookup = typeof options.secrets === 'function';
  if (options.tenant !== undefined && typeof options.tenant !== 'function') {
    throw new WebhookConfigError(
      'tenant must be a function of the request: tenant: (request) => request.params.account.',
    );
  }
  if (options.tenant !== undefined && !lookup) {
    throw new WebhookConfigError(
      "tenant needs secrets as a function that looks up the tenant's secrets: secrets: (tenant) => db.webhookSecretsOf(tenant).",
    );
  }
  if (lookup && options.tenant === undefined) {
    throw new WebhookConfigError(
      'secrets is a function: also pass tenant, which reads the tenant from the request: tenant: (request) => request.params.account.',
    );
  }
}
