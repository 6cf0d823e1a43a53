import { createHash, randomUUID } from 'node:crypto';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { WebhookConfigError } from '../../base/errors.js';
import type { DurableJob } from '../port.js';
import type { NatsConnectionOptions } from './connection.js';

/** The stream's settings a queue declares. */
export interface NatsStreamSettings {
  /** Replicas of the stream (a JetStream cluster: 3). Default 1. */
  replicas: number;
  /**
   * JetStream's duplicate window (ms): a publish whose Nats-Msg-Id the stream saw within it is dropped. The
   * ledger keeps the dedupe past it. Default 120000 (JetStream's).
   */
  duplicateWindowMs: number;
}

/** JetStream redelivers a message no worker acknowledged (or told it is working) within this. */
export const ACK_WAIT_MS = 30_000;
/**
 * The most deliveries of one message; at the last one a job not yet settled is recorded as a dead letter
 * (job_stalled). Retries and looks at an event running elsewhere are deliveries too, so it is generous.
 */
export const MAX_DELIVER = 1000;

/** A stream name of the queue's name: JetStream refuses `.`, `*`, `>` and white space in one. */
function streamName(name: string, who: string): string {
  if (typeof name !== 'string' || !/^[A-Za-z0-9_-]{1,200}$/.test(name)) {
    throw new WebhookConfigError(
      `${who}: name must be letters, digits, _ and - (a JetStream stream name), got ${JSON.stringify(name)}.`,
    );
  }
  return name;
}

/** The connection, the stream and its work-queue consumer, declared on first use and again after a failure. */
export class NatsBroker {
  readonly stream: string;
  readonly subject: string;
  readonly consumer: string;
  readonly #options: NatsConnectionOptions;
  readonly #settings: NatsStreamSettings | undefined;
  #connection: Promise<NatsConnection> | undefined;
  #declared: Promise<{ js: JetStreamClient; jsm: JetStreamManager }> | undefined;
  /** What `#declared` resolved to: a publish then need not wait on it first. */
  #jetstream: { js: JetStreamClient; jsm: JetStreamManager } | undefined;

  /** Without `settings`, the stream and consumer are used as they are, never declared. */
  constructor(
    options: NatsConnectionOptions,
    name: string,
    settings: NatsStreamSettings | undefined,
    who: string,
  ) {
    if (!options?.connection && !options?.servers) {
      throw new WebhookConfigError(
        `${who} needs \`servers\` (where NATS is: nats://host:4222) or a NATS \`connection\`.`,
      );
    }
    this.#options = options;
    this.#settings = settings;
    this.stream = streamName(name, who);
    this.subject = `${this.stream}.jobs`;
    this.consumer = `${this.stream}-workers`;
  }

  connection(): Promise<NatsConnection> {
    if (this.#options.connection) return Promise.resolve(this.#options.connection);
    // The NATS clients are loaded only now: an app that never opens a NATS queue needs none of them.
    this.#connection ??= import('@nats-io/transport-node').then(({ connect }) =>
      connect({
        servers: this.#options.servers as string | string[],
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        // Without it every publish builds two Error objects and their stacks up front, in case it fails; a
        // failure is reported in the queue's own words with the client's error as its cause.
        noAsyncTraces: true,
      }),
    );
    this.#connection.catch(() => {
      this.#connection = undefined;
    });
    return this.#connection;
  }

  /** JetStream, with the stream (file storage, work-queue retention) and the workers' consumer declared. */
  jetstream(): Promise<{ js: JetStreamClient; jsm: JetStreamManager }> {
    this.#declared ??= (async () => {
      const nc = await this.connection();
      const { jetstream, jetstreamManager } = await import('@nats-io/jetstream');
      const jsm = await jetstreamManager(nc);
      if (this.#settings) await this.#declare(jsm, this.#settings);
      this.#jetstream = { js: jetstream(nc), jsm };
      return this.#jetstream;
    })();
    this.#declared.catch(() => {
      this.#declared = undefined;
    });
    return this.#declared;
  }

  async #declare(jsm: JetStreamManager, settings: NatsStreamSettings): Promise<void> {
    const { AckPolicy, RetentionPolicy, StorageType } = await import('@nats-io/jetstream');
    const { nanos } = await import('@nats-io/transport-node');
    const stream = {
      subjects: [this.subject],
      storage: StorageType.File,
      retention: RetentionPolicy.Workqueue,
      num_replicas: settings.replicas,
      duplicate_window: nanos(settings.duplicateWindowMs),
    };
    try {
      await jsm.streams.add({ name: this.stream, ...stream });
    } catch (error) {
      if (!/already in use/i.test(String((error as Error)?.message))) throw error;
      await jsm.streams.update(this.stream, { duplicate_window: stream.duplicate_window });
    }
    const consumer = {
      durable_name: this.consumer,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ACK_WAIT_MS),
      max_deliver: MAX_DELIVER,
      max_ack_pending: -1,
    };
    try {
      await jsm.consumers.add(this.stream, consumer);
    } catch (error) {
      if (!/already (exists|in use)/i.test(String((error as Error)?.message))) throw error;
    }
  }

  /**
   * Publishes the job and resolves once JetStream acknowledged it stored (or, within the duplicate window, that
   * it holds the same Nats-Msg-Id already). `replay` gives the message an id of its own: a dead letter
   * replayed within the window is a new message, not a duplicate of its first handoff. `text` is the job as
   * JSON, when the caller has it already (the ledger row's).
   */
  async publish(job: DurableJob, timeoutMs: number, replay = false, text?: string): Promise<void> {
    const { js } = this.#jetstream ?? (await this.jetstream());
    const msgID = replay ? `${msgIdOf(job.key)}:replay:${randomUUID()}` : msgIdOf(job.key);
    await js.publish(this.subject, text ?? JSON.stringify(job), { msgID, timeout: timeoutMs });
  }

  async close(): Promise<void> {
    if (this.#options.connection) return;
    const nc = await this.#connection?.catch(() => undefined);
    this.#connection = undefined;
    this.#declared = undefined;
    this.#jetstream = undefined;
    await nc?.drain().catch(() => nc.close());
  }
}

/** The dedupe key as the Nats-Msg-Id header; a key a header cannot carry as it is goes as its SHA-256. */
export function msgIdOf(key: string): string {
  return /^[\x21-\x7e]{1,200}$/.test(key)
    ? key
    : `sha256:${createHash('sha256').update(JSON.stringify(key)).digest('hex')}`;
}
