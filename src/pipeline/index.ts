import { RawBodyError } from '../base/errors.js';
import {
  acceptedOutcome,
  type Outcome,
  type RejectionDetails,
  rejectedOutcome,
} from '../contract/outcome.js';
import type { ReasonCode, SignatureFailureReason } from '../contract/reasons.js';
import type { DurableQueue } from '../durable/port.js';
import type { ParsedEvent } from '../events/catalogue.js';
import type { ErrorContext, HandlerContext, HandlerRegistry } from '../receiver/handlers.js';
import type { Mode } from '../signature/secrets.js';
import type { SignedRequestParts } from '../signature/verifier.js';
import { checkRequest } from './1-check-request.js';
import { readBody } from './2-read-body.js';
import { type SignatureCheck, verifyDelivery } from './3-verify.js';
import { parseDelivery } from './4-parse.js';
import type { Claims, Report, Settlement } from './6-claim.js';
import { handOff } from './6-handoff.js';
import { CUT_OFF, type Executor, TIMED_OUT, withTimeout } from './7-execute.js';
import type { Delivery } from './delivery.js';
import { deliveryContext } from './handler-context.js';

export interface PipelineParts<Tx> {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  retryAfterSeconds: number;
  handlerTimeoutMs?: number | undefined;
  ack: 'sync' | 'async';
  waitUntil?: ((work: Promise<unknown>) => void) | undefined;
  /** Clock in milliseconds. */
  now: () => number;
  check: SignatureCheck;
  /** The message of a signature failure, in the terms of the receiver's profile. */
  explainSignature: (reason: SignatureFailureReason, request: SignedRequestParts) => string;
  parseEvent: (value: unknown) => ParsedEvent;
  /** The event's dedupe key, per mode: its id, or a hash of what the sender signed when it has none. */
  dedupeKey: (mode: Mode, event: { id?: string }, request: SignedRequestParts) => string | Promise<string>;
  registry: HandlerRegistry<never, Tx>;
  claims: Claims<Tx>;
  executor: Executor;
  report: Report;
  /** Durable acknowledgement: the job engine takes verified events in place of claim, run and settle. */
  queue?: DurableQueue | undefined;
  /** Requests past verification: close() waits for them, and refuses new ones once it started. */
  admission: { closing: boolean; enter(): void; leave(): void };
}

const ALLOW_POST: RejectionDetails = { headers: { allow: 'POST' } };
// The rest of a timed-out or oversized body is never read: the connection cannot carry another request.
const CLOSE: RejectionDetails = { headers: { connection: 'close' } };

/**
 * The receiver's pipeline: check the request → read the body → verify → parse → claim → run the handlers on the
 * executor → settle → answer. Each stage returns a reason to stop or goes on; only stages with real waiting
 * (a streamed body, async crypto, the store, the handlers) cost a promise.
 */
export function createPipeline<Tx>(parts: PipelineParts<Tx>): (delivery: Delivery) => Promise<Outcome> {
  const retryAfter: RejectionDetails = { retryAfterSeconds: parts.retryAfterSeconds };
  const { admission } = parts;

  return async function receive(delivery) {
    const reject = (reason: ReasonCode, details?: RejectionDetails) =>
      rejectedOutcome(reason, delivery.requestId, details);
    if (admission.closing) return reject('shutting_down', retryAfter);
    const refused = checkRequest(delivery);
    if (refused) return reject(refused, refused === 'method_not_allowed' ? ALLOW_POST : undefined);

    let unread = readBody(delivery, parts.maxBodyBytes, parts.bodyTimeoutMs);
    if (unread instanceof Promise) unread = await unread;
    if (unread === 'body_already_parsed') return bodyAlreadyParsed(delivery, parts.report);
    if (unread) {
      return reject(unread, unread === 'body_timeout' || unread === 'payload_too_large' ? CLOSE : undefined);
    }

    let unverified = verifyDelivery(delivery, parts.check, Math.floor(parts.now() / 1000));
    if (unverified instanceof Promise) unverified = await unverified;
    if (unverified) {
      const message = parts.explainSignature(unverified, {
        headers: delivery.request.headers,
        body: delivery.body as string | Uint8Array,
      });
      return reject(unverified, { message });
    }

    // Admitted only now: close() waits for verified work, never for a body still uploading.
    if (admission.closing) return reject('shutting_down', retryAfter);
    admission.enter();
    try {
      return tag(delivery, await process(delivery, reject));
    } finally {
      admission.leave();
    }
  };

  async function process(
    delivery: Delivery,
    reject: (reason: ReasonCode, details?: RejectionDetails) => Outcome,
  ): Promise<Outcome> {
    const unparsed = parseDelivery(delivery, parts.parseEvent);
    if (unparsed) {
      if (unparsed.reason === 'invalid_json') return reject('invalid_json');
      const paths = unparsed.issues.map((issue) => issue.path || '(body)').join(', ');
      return reject('invalid_event', {
        message: `The event does not match its schema at: ${paths}.`,
        issues: unparsed.issues,
      });
    }
    const event = delivery.event as { type: string; id?: string };
    const mode = delivery.mode as Mode;
    let key = parts.dedupeKey(mode, event, {
      headers: delivery.request.headers,
      body: delivery.body as string | Uint8Array,
    });
    if (typeof key !== 'string') key = await key;
    const context: ErrorContext = {
      requestId: delivery.requestId,
      reason: 'handler_failed',
      eventType: event.type,
      mode,
    };
    if (event.id !== undefined) context.eventId = event.id;
    delivery.context = context;

    const handlerContext = deliveryContext(delivery, mode, key);
    if (parts.queue) {
      const job = { key, event, ctx: handlerContext };
      return handOff(parts.queue, job, {
        requestId: delivery.requestId,
        retryAfterSeconds: parts.retryAfterSeconds,
        errorContext: context,
        reportError: (error, errorContext) => parts.registry.reportError(error, errorContext),
      });
    }

    // A place in the executor before claiming: a retry of an event turned away here finds it unclaimed.
    if (!parts.executor.reserve())
      return reject(admission.closing ? 'shutting_down' : 'overloaded', retryAfter);
    const ctx: HandlerContext<Tx> = { ...handlerContext, tx: undefined as Tx };
    let attempt = parts.claims.take(
      key,
      (tx) => parts.registry.dispatch(event, tx === undefined ? ctx : { ...ctx, tx }),
      context,
    );
    if (attempt instanceof Promise) attempt = await attempt;
    if (attempt.status !== 'claimed') {
      parts.executor.unreserve();
      if (attempt.status === 'duplicate') return acceptedOutcome(delivery.requestId, 200, true);
      if (attempt.status === 'unavailable') return reject('store_unavailable', retryAfter);
      return reject('event_in_progress', {
        retryAfterSeconds: Math.max(1, Math.ceil(attempt.retryAfterMs / 1000)),
      });
    }
    const work = parts.executor.submit(attempt.claim);
    if (parts.ack === 'async') {
      await keepAlive(delivery.request.waitUntil ?? parts.waitUntil, work, context, parts.report);
      return acceptedOutcome(delivery.requestId, 202);
    }
    const settled =
      parts.handlerTimeoutMs === undefined ? await work : await withTimeout(work, parts.handlerTimeoutMs);
    if (settled === TIMED_OUT) return reject('handler_timeout', retryAfter);
    if (settled === CUT_OFF) return reject('shutting_down', retryAfter);
    return answer(settled, delivery.requestId, reject, retryAfter);
  }
}

function answer(
  settled: Settlement,
  requestId: string,
  reject: (reason: ReasonCode, details?: RejectionDetails) => Outcome,
  retryAfter: RejectionDetails,
): Outcome {
  switch (settled.status) {
    case 'completed':
      return acceptedOutcome(requestId, 200);
    case 'abandoned':
      return reject('shutting_down', retryAfter);
    case 'failed':
      return settled.reason === 'handler_failed'
        ? reject('handler_failed')
        : reject(settled.reason, retryAfter);
  }
}

/** Labels an answer with the event it is about, for logs and metrics. */
function tag(delivery: Delivery, outcome: Outcome): Outcome {
  const event = delivery.event;
  if (event)
    outcome.event = event.id === undefined ? { type: event.type } : { id: event.id, type: event.type };
  outcome.mode = delivery.mode;
  return outcome;
}

async function bodyAlreadyParsed(delivery: Delivery, report: Report): Promise<Outcome> {
  const { message } = new RawBodyError(delivery.notBytes, delivery.request.rawBodyHint);
  await report('body_already_parsed', message, undefined, {
    requestId: delivery.requestId,
    reason: 'body_already_parsed',
  });
  return rejectedOutcome('body_already_parsed', delivery.requestId, { message });
}

/** Hands async work to the platform (waitUntil); the event is already queued, so a throwing hook only gets reported. */
async function keepAlive(
  waitUntil: ((work: Promise<unknown>) => void) | undefined,
  work: Promise<unknown>,
  context: ErrorContext,
  report: Report,
): Promise<void> {
  if (!waitUntil) return;
  try {
    waitUntil(work);
  } catch (cause) {
    await report(
      'wait_until_failed',
      'waitUntil threw; the event is processed in this process anyway.',
      cause,
      context,
    );
  }
}
