import type { ErrorCode } from './errors.js';

/** Which of the receiver's secrets verified a delivery: with `secrets: { live, test }`, the mode it belongs to. */
export type Mode = 'live' | 'test';

/** What a handler knows about the delivery besides the event itself. */
export interface HandlerContext<Tx = undefined> {
  requestId: string;
  /**
   * Mode of the secret that verified the signature, with `secrets: { live, test }`. A single secret or list
   * names no mode: it counts as `live` here (and in the dedupe key), whatever the service signed with; pass
   * `{ live, test }` when handlers must tell test traffic apart. Logs and onRejected leave the mode out then.
   */
  mode: Mode;
  /** The signature's timestamp (unix seconds): when the service sent this attempt. */
  timestamp: number;
  /**
   * The key this event is deduplicated under: `<mode>:<event id>`, or `<mode>:sha256:<hash of the signed body>`
   * (for a body signature, the body without its member). With a tenant, `tenant:<the tenant, URI-encoded>:` comes
   * first, so two tenants' events with one id never collide.
   */
  dedupeKey: string;
  /** The delivery's message id, for a profile that signs one (Standard Webhooks: `webhook-id`). */
  messageId?: string;
  /**
   * With the receiver's `tenant` option: the tenant whose secret verified this delivery (the account, the
   * organization). Undefined for a receiver with one static `secrets`.
   */
  tenant?: string | undefined;
  /** Durable workers: which run of the job this is, from 1. Undefined when the receiver runs the handler. */
  attempt?: number;
  /** The store's unit of work (PostgreSQL transactional mode: the transaction's client), else undefined. */
  tx: Tx;
}

export interface ErrorContext {
  requestId: string;
  /** The same code as the error's. */
  reason: ErrorCode;
  eventId?: string;
  eventType?: string;
  mode?: Mode;
  /** With the receiver's `tenant` option: the tenant the request named, once it was read from the request. */
  tenant?: string;
  /** Durable workers: the run of the job that failed (from 1), and the runs the job was allowed. */
  attempt?: number;
  attempts?: number;
}

/** What a verified delivery tells its handlers, wherever they run: the receiver itself or a durable worker. */
export type DeliveryContext = Omit<HandlerContext<undefined>, 'tx' | 'attempt'>;
