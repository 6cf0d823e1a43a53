import { createHash } from 'node:crypto';
import type { ChannelModel, ConfirmChannel, Options } from 'amqplib';
import { WebhookConfigError } from '../../base/errors.js';
import { LONE_SURROGATE } from '../../stores/lossless-key.js';
import type { DurableJob } from '../port.js';

/**
 * How often RabbitMQ delivers a job whose workers never answered (died or froze on it) before it
 * dead-letters it to `<name>.dead`, where a worker records it as a dead letter (job_stalled).
 */
export const DELIVERY_LIMIT = 10;

/** Where RabbitMQ is: a URL, or a connection of yours (amqplib's connect()). */
export interface RabbitmqConnectionOptions {
  /**
   * `amqp://user:password@host:5672/vhost`, or the nodes of a cluster (each connection goes to the next one
   * that answers); the queue opens its own connection and closes it on close().
   */
  url?: string | string[];
  /** An amqplib connection you opened (never closed by the queue). */
  connection?: ChannelModel;
}

/** The quorum queues of one job queue: the jobs, its dead-letter queue, and the waits of delayed copies. */
export function queueNames(name: string) {
  return { jobs: name, dead: `${name}.dead`, wait: (ms: number) => `${name}.wait.${ms}` };
}

/** The wait queue of a delay: one per power of two, so a copy waits behind others of at most twice its delay. */
export function waitBucket(delayMs: number): number {
  return 2 ** Math.max(7, Math.ceil(Math.log2(Math.max(1, delayMs))));
}

const QUORUM = { 'x-queue-type': 'quorum' };
/** Dead-lettering out of a quorum queue that is itself at-least-once: the message leaves only once it arrived. */
const AT_LEAST_ONCE = { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' };

/** A connection and its confirm channels, opened on first use and again after either closed. */
export class Broker {
  readonly names: ReturnType<typeof queueNames>;
  readonly #options: RabbitmqConnectionOptions;
  #connection: Promise<ChannelModel> | undefined;
  #publisher: Promise<ConfirmChannel> | undefined;
  /** The publishing channel once open: a publish then goes out without waiting on `#publisher` first. */
  #open: ConfirmChannel | undefined;
  readonly #waits = new Map<number, Promise<unknown>>();
  #closed = false;
  #next = 0;

  constructor(options: RabbitmqConnectionOptions, name: string, who: string) {
    const urls = typeof options?.url === 'string' ? [options.url] : options?.url;
    if (!options?.connection && (!Array.isArray(urls) || urls.length === 0 || !urls.every((url) => url))) {
      throw new WebhookConfigError(
        `${who} needs \`url\` (where RabbitMQ is: amqp://user:password@host:5672) or an amqplib \`connection\`.`,
      );
    }
    this.#options = options;
    this.names = queueNames(name);
  }

  /** Every queue name this broker declared, for tools that remove them. */
  declared(): string[] {
    return [this.names.jobs, this.names.dead, ...[...this.#waits.keys()].map(this.names.wait)];
  }

  connection(): Promise<ChannelModel> {
    if (this.#options.connection) return Promise.resolve(this.#options.connection);
    this.#connection ??= (async () => {
      // amqplib is loaded only now: an app that never opens a RabbitMQ queue needs no amqplib.
      const { default: amqp } = await import('amqplib');
      const connection = await this.#connectToANode((url) => amqp.connect(url));
      connection.on('error', () => {}); // told by the call that meets it; a fresh connection is opened then
      connection.on('close', () => {
        this.#connection = undefined;
      });
      return connection;
    })();
    this.#connection.catch(() => {
      this.#connection = undefined;
    });
    return this.#connection;
  }

  /** The next node of the list that answers, starting after the one connected to last. */
  async #connectToANode(open: (url: string) => Promise<ChannelModel>): Promise<ChannelModel> {
    const urls = typeof this.#options.url === 'string' ? [this.#options.url] : (this.#options.url ?? []);
    let failure: unknown;
    for (let tried = 0; tried < urls.length; tried++) {
      const url = urls[this.#next++ % urls.length] as string;
      try {
        return await open(url);
      } catch (error) {
        failure = error;
      }
    }
    throw failure;
  }

  /** A confirm channel of its own with the job queues declared: a worker's. */
  async channel(): Promise<ConfirmChannel> {
    const channel = await (await this.connection()).createConfirmChannel();
    channel.on('error', () => {}); // a channel error closes it; its calls reject and say why
    await this.#declare(channel);
    return channel;
  }

  /** The shared publishing channel, opened again once it closed. */
  publisher(): Promise<ConfirmChannel> {
    if (this.#publisher) return this.#publisher;
    // A channel retired after a nack closes later: its close must not forget the channel opened after it.
    let opening!: Promise<ConfirmChannel>;
    opening = (async () => {
      const channel = await this.channel();
      channel.on('close', () => {
        if (this.#open === channel) this.#open = undefined;
        if (this.#publisher !== opening) return;
        this.#publisher = undefined;
        this.#waits.clear();
      });
      if (this.#publisher === opening) this.#open = channel;
      return channel;
    })();
    this.#publisher = opening;
    opening.catch(() => {
      if (this.#publisher === opening) this.#publisher = undefined;
    });
    return opening;
  }

  async #declare(channel: ConfirmChannel): Promise<void> {
    const { jobs, dead } = this.names;
    await channel.assertQueue(dead, { durable: true, arguments: QUORUM });
    await channel.assertQueue(jobs, {
      durable: true,
      arguments: {
        ...QUORUM,
        ...AT_LEAST_ONCE,
        'x-delivery-limit': DELIVERY_LIMIT,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': dead,
      },
    });
  }

  /**
   * Publishes to a queue and resolves once RabbitMQ confirmed it; a nack or a closed channel rejects. The
   * message's timestamp (AMQP's, in seconds) is when it was first published, unless `options` carries one.
   */
  publish(
    queue: string,
    job: DurableJob,
    options?: Options.Publish,
    channel?: ConfirmChannel,
  ): Promise<void> {
    return this.publishText(queue, job.key, JSON.stringify(job), options, channel);
  }

  /** As publish, with the job already as JSON `text` (the ledger row's). */
  publishText(
    queue: string,
    key: string,
    text: string,
    options?: Options.Publish,
    channel?: ConfirmChannel,
  ): Promise<void> {
    const target = channel ?? this.#open;
    if (!target)
      return this.publisher().then((opened) => this.publishText(queue, key, text, options, opened));
    return new Promise<void>((resolve, reject) => {
      const properties: Options.Publish = {
        persistent: true,
        contentType: 'application/json',
        messageId: messageIdOf(key),
        timestamp: Math.floor(Date.now() / 1000),
      };
      target.sendToQueue(
        queue,
        Buffer.from(text),
        options ? Object.assign(properties, options) : properties,
        (error) => {
          if (!error) return resolve();
          this.#retire(target);
          reject(nacked(error));
        },
      );
    });
  }

  /**
   * A channel that was nacked is closed: a quorum queue that lost its leader can go on nacking every publish
   * of a channel that published to it before, after a new leader took over. The shared channel's next publish
   * opens another; a worker's channel closes, its unacked messages go back, and the worker subscribes again.
   */
  #retire(channel: ConfirmChannel): void {
    if (channel === this.#open) {
      this.#open = undefined;
      this.#publisher = undefined;
      this.#waits.clear();
    }
    channel.close().catch(() => {});
  }

  /**
   * Publishes a copy that comes back to the job queue after `delayMs`, through a wait queue; it keeps the
   * `timestamp` of the message it copies, so a copy's age is its first publish's.
   */
  async publishLater(
    job: DurableJob,
    delayMs: number,
    channel?: ConfirmChannel,
    timestamp?: number,
  ): Promise<void> {
    const target = channel ?? (await this.publisher());
    const bucket = waitBucket(delayMs);
    const wait = this.names.wait(bucket);
    let declared = this.#waits.get(bucket);
    if (!declared) {
      declared = target.assertQueue(wait, {
        durable: true,
        arguments: {
          ...QUORUM,
          ...AT_LEAST_ONCE,
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': this.names.jobs,
        },
      });
      this.#waits.set(bucket, declared);
      declared.catch(() => this.#waits.delete(bucket));
    }
    await declared;
    const expiration = String(Math.max(0, Math.round(delayMs)));
    await this.publish(
      wait,
      job,
      timestamp === undefined ? { expiration } : { expiration, timestamp },
      target,
    );
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const publisher = await this.#publisher?.catch(() => undefined);
    await publisher?.close().catch(() => {});
    if (!this.#options.connection) {
      const connection = await this.#connection?.catch(() => undefined);
      await connection?.close().catch(() => {});
    }
  }
}

/** The dedupe key as the AMQP message id; a key that does not fit a short string goes as its SHA-256. */
export function messageIdOf(key: string): string {
  const bytes = Buffer.byteLength(key);
  return bytes <= 255 && !LONE_SURROGATE.test(key)
    ? key
    : `sha256:${createHash('sha256').update(JSON.stringify(key)).digest('hex')}`;
}

function nacked(error: unknown): Error {
  const message = String((error as Error)?.message ?? error);
  return new Error(`RabbitMQ did not confirm the message (${message}).`, { cause: error });
}
