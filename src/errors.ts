/** Why a signature header did not verify, in the order the checks run (cheap checks first). */
export type SignatureFailureReason =
  | 'missing_signature'
  | 'malformed_signature'
  | 'stale_timestamp'
  | 'future_timestamp'
  | 'signature_mismatch';

/**
 * The reasons answered with a 4xx status: the request was turned away and nothing was processed. The sender
 * fixes it (a signature, a body, a header), or, for event_in_progress, retries later.
 */
export type RejectionReason =
  | SignatureFailureReason
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'request_aborted'
  | 'body_timeout'
  | 'content_length_mismatch'
  | 'invalid_json'
  | 'invalid_event'
  | 'event_in_progress';

/** Every reason code the receiver can answer with; each maps to exactly one HTTP status. */
export type ReasonCode =
  | RejectionReason
  | 'handler_failed'
  | 'handler_timeout'
  | 'body_already_parsed'
  | 'store_unavailable'
  | 'queue_unavailable'
  | 'overloaded'
  | 'shutting_down'
  | 'receiver_misconfigured';

/** The whole HTTP contract of rejections: one status per reason, so every adapter answers alike. */
export const reasonStatus: Readonly<Record<ReasonCode, number>> = {
  missing_signature: 401,
  malformed_signature: 401,
  stale_timestamp: 401,
  future_timestamp: 401,
  signature_mismatch: 401,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  payload_too_large: 413,
  request_aborted: 400,
  body_timeout: 408,
  content_length_mismatch: 400,
  invalid_json: 400,
  invalid_event: 422,
  event_in_progress: 409,
  handler_failed: 500,
  handler_timeout: 503,
  body_already_parsed: 500,
  store_unavailable: 503,
  queue_unavailable: 503,
  overloaded: 503,
  shutting_down: 503,
  receiver_misconfigured: 500,
};

/**
 * Messages that say what to do. They never contain a secret, a signature or a body:
 * they are sent to the client and written to logs.
 */
export const reasonMessage: Readonly<Record<ReasonCode, string>> = {
  missing_signature:
    'The webhook-signature header is missing or empty. Send the header the service signed, or set the signatureHeader option if the service uses another name.',
  malformed_signature:
    'The signature header is not of the form t=<unix seconds>,v1=<hex>: it needs exactly one t (digits only) and at least one v1.',
  stale_timestamp:
    'The signature timestamp is older than the tolerance. Replays are dropped; if this is a live delivery, check the clock of this server (NTP) or raise toleranceSeconds.',
  future_timestamp:
    'The signature timestamp is further in the future than the tolerance. Check the clock of this server (NTP) or raise toleranceSeconds.',
  signature_mismatch:
    'No v1 signature matches the body with any configured secret. Check that the secret is the one of this endpoint and mode, and that the body reaches the receiver as raw bytes, not re-serialized JSON.',
  method_not_allowed: 'Webhooks are delivered with POST.',
  unsupported_media_type: 'Webhooks are JSON: send Content-Type: application/json.',
  payload_too_large: 'The body is larger than maxBodyBytes allows.',
  request_aborted: 'The request body could not be read to its end (the client closed the connection).',
  body_timeout:
    'The body was not complete within bodyTimeoutMs. Send the whole body at once, with a Content-Length equal to its size in bytes; the connection is closed.',
  content_length_mismatch:
    'The body ended at another length than its Content-Length header declared. Send Content-Length equal to the body size in bytes, or leave it out and send the body chunked.',
  invalid_json: 'The body is not valid JSON.',
  invalid_event: 'The event does not match its schema.',
  event_in_progress:
    'This event is being processed by another delivery right now. Retry after the given delay.',
  handler_failed: 'A handler for this event failed. The event was not marked as processed; retry it.',
  handler_timeout:
    'Handlers for this event are still running past handlerTimeoutMs. Retry later: a finished event is answered as a duplicate.',
  body_already_parsed:
    'The receiver got a parsed object instead of the raw request body, so the signature cannot be checked. Mount the webhook route before any JSON body parser (see the README, "Body already parsed").',
  store_unavailable: 'The dedupe store cannot be reached. Nothing was processed; retry later.',
  queue_unavailable:
    'The job engine (BullMQ on Redis or pg-boss on PostgreSQL) did not take the event: it cannot be reached, answered too late, or is set up so that it could lose it (onError is told which). Nothing was acknowledged; retry later.',
  overloaded: 'Too many events are waiting to be processed. Nothing was processed; retry later.',
  shutting_down: 'The receiver is shutting down. Nothing was processed; retry later.',
  receiver_misconfigured:
    'The webhook receiver could not be created from its configuration (see the server log). Nothing was processed; retry once it is fixed.',
};

/**
 * What onError is told: the reason code of the answer, or one of the failures that change no answer (the
 * request was already answered or is answered anyway): a claim taken over before it settled, a throwing
 * waitUntil, a job engine whose durability could not be checked.
 */
export type ErrorCode = ReasonCode | 'lease_lost' | 'wait_until_failed' | 'persistence_unchecked';

/** A mistake in how the library is configured or called: thrown at once, never sent to a client. */
export class WebhookConfigError extends Error {
  override name = 'WebhookConfigError';
}

/**
 * A raw body that is not bytes or a string: the framework parsed the body before the receiver saw it.
 * The signature is over the exact bytes sent, so a parsed object can never be verified.
 */
export class RawBodyError extends TypeError {
  override name = 'RawBodyError';
  readonly code = 'body_already_parsed';
  constructor(received: unknown, hint?: string) {
    super(
      `Expected the raw request body as a Uint8Array/Buffer or string, got ${describe(received)}. ` +
        (hint ??
          'The body was parsed before the webhook route saw it. Express: mount the webhook route before express.json(), or use express.raw({ type: "application/json" }) on it. ' +
            'Fastify: register the messaging-webhooks plugin (it keeps the raw bytes for its route). ' +
            'Next.js: App Router, use createRouteHandler; Pages Router, export const config = { api: { bodyParser: false } }.'),
    );
  }
}

/**
 * A handler threw, or the pipeline failed around it; passed to onError handlers. Its message ends with its
 * cause's text (`… Cause: The Redis store did not answer within 1000 ms …`): a handler that prints only
 * `error.message` still sees which store, which deadline or which handler error.
 */
export class WebhookHandlerError extends Error {
  override name = 'WebhookHandlerError';
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    const cause = options && 'cause' in options ? causeText(options.cause) : undefined;
    super(cause === undefined ? message : `${message} Cause: ${cause}`, options);
    this.code = code;
  }
}

const MAX_CAUSE_LENGTH = 500;

/** The cause's own message(s) on one line, with any password of a connection URL masked. */
function causeText(cause: unknown): string | undefined {
  if (cause === undefined || cause === null) return undefined;
  let text =
    cause instanceof AggregateError
      ? `${cause.message} ${cause.errors.map((error) => causeText(error)).join('; ')}`
      : cause instanceof Error
        ? `${cause.name === 'Error' ? '' : `${cause.name}: `}${cause.message}`
        : String(cause);
  text = text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/(\/\/[^\s/:@]*):[^\s/@]*@/g, '$1:***@');
  if (text.length > MAX_CAUSE_LENGTH) text = `${text.slice(0, MAX_CAUSE_LENGTH)}…`;
  return text || undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'object') {
    const name = (value as object).constructor?.name;
    return name && name !== 'Object' ? `an instance of ${name}` : 'a plain object (already-parsed JSON)';
  }
  return `a ${typeof value}`;
}
