import type { Report } from '../claims/report.js';
import { type Outcome, REQUEST_ID_HEADER, rejectedOutcome } from '../contract/outcome.js';
import { type ReasonCode, reasonAnswers } from '../contract/reasons.js';
import type { Received } from './1-read.js';
import type { Verified } from './2-verify.js';
import type { Parsed } from './3-event.js';
import type { Ending, Rejection } from './ending.js';

export interface Answering {
  /** The Retry-After of a reason advised `later`, unless the stage that stopped knows better. */
  retryAfterSeconds: number;
  report: Report;
}

/** Headers a reason's answer carries whatever the request. */
const REASON_HEADERS: Partial<Record<ReasonCode, Record<string, string>>> = {
  method_not_allowed: { allow: 'POST' },
  // The rest of a timed-out or oversized body is never read: the connection cannot carry another request.
  body_timeout: { connection: 'close' },
  payload_too_large: { connection: 'close' },
};

/**
 * The answer of a walk: how it was acknowledged, or why a stage rejected it. A body already parsed is also told
 * to onError: the receiver's mounting is at fault, not the sender.
 */
export async function answer(received: Received, ending: Ending, answering: Answering): Promise<Outcome> {
  const { requestId } = received;
  if ('ack' in ending) {
    if (ending.ack === 'processed') return acceptedOutcome(requestId, 200);
    if (ending.ack === 'duplicate') return acceptedOutcome(requestId, 200, true);
    if (ending.ack === 'accepted') return acceptedOutcome(requestId, 202);
    return ignoredOutcome(requestId);
  }
  if (ending.stop === 'body_already_parsed') return bodyAlreadyParsed(requestId, ending, answering.report);
  return refuse(ending, requestId, answering.retryAfterSeconds);
}

/** A rejection as the contract has it: its status and message, and Retry-After when the advice is `later`. */
function refuse(rejection: Rejection, requestId: string, retryAfterSeconds: number): Outcome {
  const reason = rejection.stop;
  const later = reasonAnswers[reason].retry === 'later';
  return rejectedOutcome(reason, requestId, {
    message: rejection.message,
    issues: rejection.issues,
    headers: REASON_HEADERS[reason],
    retryAfterSeconds: later ? (rejection.retryAfterSeconds ?? retryAfterSeconds) : undefined,
  });
}

async function bodyAlreadyParsed(requestId: string, rejection: Rejection, report: Report): Promise<Outcome> {
  const message = rejection.message ?? reasonAnswers.body_already_parsed.message;
  await report('body_already_parsed', message, undefined, { requestId, reason: 'body_already_parsed' });
  return rejectedOutcome('body_already_parsed', requestId, { message });
}

/** Labels an answer with the event it is about, for logs and metrics. */
export function tag(reached: Received | Verified | Parsed, outcome: Outcome): Outcome {
  const { event, mode, tenant } = reached as Partial<Parsed>;
  if (event)
    outcome.event = event.id === undefined ? { type: event.type } : { id: event.id, type: event.type };
  if (mode !== undefined) outcome.mode = mode;
  if (tenant !== undefined) outcome.tenant = tenant;
  return outcome;
}

const RECEIVED = '{"received":true}';
const DUPLICATE = '{"received":true,"duplicate":true}';

const RECEIVED_LENGTH = String(RECEIVED.length); // ASCII: characters are bytes
const DUPLICATE_LENGTH = String(DUPLICATE.length);

function acceptedOutcome(requestId: string, status: 200 | 202, duplicate = false): Outcome {
  return {
    status,
    headers: {
      'content-type': 'application/json',
      'content-length': duplicate ? DUPLICATE_LENGTH : RECEIVED_LENGTH,
      [REQUEST_ID_HEADER]: requestId,
    },
    body: duplicate ? DUPLICATE : RECEIVED,
    requestId,
    ...(duplicate ? { duplicate } : {}),
  };
}

const IGNORED = '{"received":true,"ignored":true}';
const IGNORED_LENGTH = String(IGNORED.length);

/** A verified event of a mode the receiver ignores: 200, so the service stops retrying it. */
function ignoredOutcome(requestId: string): Outcome {
  return {
    status: 200,
    headers: {
      'content-type': 'application/json',
      'content-length': IGNORED_LENGTH,
      [REQUEST_ID_HEADER]: requestId,
    },
    body: IGNORED,
    requestId,
    ignored: true,
  };
}
