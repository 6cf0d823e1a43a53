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
  | 'unsupported_encoding'
  | 'payload_too_large'
  | 'request_aborted'
  | 'body_timeout'
  | 'content_length_mismatch'
  | 'invalid_json'
  | 'invalid_event'
  | 'event_in_progress'
  | 'unknown_tenant';

/** Every reason code the receiver can answer with; each maps to exactly one HTTP status. */
export type ReasonCode =
  | RejectionReason
  | 'handler_failed'
  | 'handler_timeout'
  | 'body_already_parsed'
  | 'store_unavailable'
  | 'not_replicated'
  | 'queue_unavailable'
  | 'tenant_lookup_failed'
  | 'overloaded'
  | 'shutting_down'
  | 'receiver_misconfigured';

/**
 * What the sender should do about an answer: `fix` the request (it is wrong as sent; a retry fails the same way),
 * retry `later` (the answer carries Retry-After), or retry `again` at the sender's own pace (this side failed).
 */
export type RetryAdvice = 'fix' | 'later' | 'again';

export interface ReasonAnswer {
  readonly status: number;
  readonly retry: RetryAdvice;
  /**
   * What to do. Never a secret, a signature or a body: it is sent to the client and written to logs. A receiver
   * answers signature failures in the terms of its profile (SignatureProfile.explain: its header or body member,
   * its syntax, its options); the messages here are what is true under any profile.
   */
  readonly message: string;
}

/** The whole HTTP contract of rejections: one status, one retry advice and one message per reason, for every adapter. */
export const reasonAnswers: Readonly<Record<ReasonCode, ReasonAnswer>> = {
  missing_signature: {
    status: 401,
    retry: 'fix',
    message: 'The request carries no signature where the signature profile expects one.',
  },
  malformed_signature: {
    status: 401,
    retry: 'fix',
    message: 'The signature is not in the form the signature profile expects.',
  },
  stale_timestamp: {
    status: 401,
    retry: 'fix',
    message:
      'The signature timestamp is older than the tolerance (the answer says how old, and the tolerance: toleranceSeconds, default 300 s). Replays are dropped; if this is a live delivery, check the clock of this server (NTP) or raise toleranceSeconds.',
  },
  future_timestamp: {
    status: 401,
    retry: 'fix',
    message:
      'The signature timestamp is further in the future than the tolerance (the answer says how far, the tolerance, and when it looks like milliseconds: it is unix seconds). Check the clock of this server (NTP) or raise toleranceSeconds.',
  },
  signature_mismatch: {
    status: 401,
    retry: 'fix',
    message:
      'No signature matches the signed content with any configured secret. Check that the secret is the one of this endpoint and mode, and that the body reaches the receiver as raw bytes, not re-serialized JSON.',
  },
  method_not_allowed: {
    status: 405,
    retry: 'fix',
    message: 'Webhooks are delivered with POST.',
  },
  unsupported_media_type: {
    status: 415,
    retry: 'fix',
    message: 'Webhooks are JSON: send Content-Type: application/json.',
  },
  unsupported_encoding: {
    status: 415,
    retry: 'fix',
    message:
      'The body is compressed (a Content-Encoding other than identity); webhooks are read only as the uncompressed JSON their signature covers. Turn off request compression on any proxy or gateway in front of this route.',
  },
  payload_too_large: {
    status: 413,
    retry: 'fix',
    message: 'The body is larger than maxBodyBytes allows.',
  },
  request_aborted: {
    status: 400,
    retry: 'fix',
    message: 'The request body could not be read to its end (the client closed the connection).',
  },
  body_timeout: {
    status: 408,
    retry: 'fix',
    message:
      'The body was not complete within bodyTimeoutMs. Send the whole body at once, with a Content-Length equal to its size in bytes; the connection is closed.',
  },
  content_length_mismatch: {
    status: 400,
    retry: 'fix',
    message:
      'The body ended at another length than its Content-Length header declared. Send Content-Length equal to the body size in bytes, or leave it out and send the body chunked.',
  },
  invalid_json: {
    status: 400,
    retry: 'fix',
    message: 'The body is not valid JSON.',
  },
  invalid_event: {
    status: 422,
    retry: 'fix',
    message: 'The event does not match its schema.',
  },
  event_in_progress: {
    status: 409,
    retry: 'later',
    message: 'This event is being processed by another delivery right now. Retry after the given delay.',
  },
  unknown_tenant: {
    status: 401,
    retry: 'fix',
    message:
      'The receiver knows no webhook secret for the tenant this request names (or the request names none). Check the URL the service posts to for this account, and that the secrets lookup knows the tenant.',
  },
  handler_failed: {
    status: 500,
    retry: 'again',
    message: 'A handler for this event failed. The event was not marked as processed; retry it.',
  },
  handler_timeout: {
    status: 503,
    retry: 'later',
    message:
      'Handlers for this event are still running past handlerTimeoutMs. Retry later: a finished event is answered as a duplicate.',
  },
  body_already_parsed: {
    status: 500,
    retry: 'again',
    message:
      'The receiver got a parsed object instead of the raw request body, so the signature cannot be checked. Mount the webhook route before any JSON body parser (see docs/frameworks.md, "Body already parsed").',
  },
  store_unavailable: {
    status: 503,
    retry: 'later',
    message: 'The dedupe store cannot be reached. Nothing was processed; retry later.',
  },
  not_replicated: {
    status: 503,
    retry: 'later',
    message:
      'The event was processed, but fewer replicas than waitForReplicas asks for hold its record yet, so it is not acknowledged: a failover now could lose it. Retry later: it is answered this way until the replicas hold it, then 200 duplicate.',
  },
  queue_unavailable: {
    status: 503,
    retry: 'later',
    message:
      'The job engine (BullMQ on Redis or pg-boss on PostgreSQL) did not take the event: it cannot be reached, answered too late, or is set up so that it could lose it (onError is told which). Nothing was acknowledged; retry later.',
  },
  tenant_lookup_failed: {
    status: 503,
    retry: 'later',
    message:
      'The webhook secret of the tenant this request names could not be looked up (the lookup failed, answered too late, or gave an unusable secret; onError is told which). Nothing was processed; retry later.',
  },
  overloaded: {
    status: 503,
    retry: 'later',
    message: 'Too many events are waiting to be processed. Nothing was processed; retry later.',
  },
  shutting_down: {
    status: 503,
    retry: 'later',
    message: 'The receiver is shutting down. Nothing was processed; retry later.',
  },
  receiver_misconfigured: {
    status: 500,
    retry: 'again',
    message:
      'The webhook receiver could not be created from its configuration (see the server log). Nothing was processed; retry once it is fixed.',
  },
};
