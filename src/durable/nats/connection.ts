import type { NatsConnection } from '@nats-io/transport-node';

/** Where NATS is: its servers, or a connection of yours. */
export interface NatsConnectionOptions {
  /** `nats://host:4222` (or several); the queue opens its own connection and drains it on close(). */
  servers?: string | string[];
  /** A NATS connection you opened (@nats-io/transport-node's connect()), never closed by the queue. */
  connection?: NatsConnection;
}
