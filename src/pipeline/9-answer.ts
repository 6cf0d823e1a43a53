import { acceptedOutcome, ignoredOutcome, type Outcome, rejectedOutcome } from '../contract/outcome.js';
import { type ReasonCode, reasonAnswers } from '../contract/reasons.js';
import type { Received } from './1-check-request.js';
import type { Verified } from './3-verify.js';
import type { Parsed } from './4-parse.js';
import type { Settlement } from './8-settle.js';
import type { Report } from './report.js';
import type { Rejection, Stop } from './stop.js';

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

const SHUTTING_DOWN: Rejection = { stop: 'shutting_down' };

/**
 * The answer of a walk: where a stage stopped it, or how its claim settled. A body already parsed is also told
 * to onError: the receiver's mounting is at fault, not the sender.
 */
export function answer(
  received: Received,
  ending: Stop | Settlement,
  answering: Answering,
): Outcome | Promise<Outcome> {
  const { requestId } = received;
  if ('status' in ending) return settled(ending, requestId, answering.retryAfterSeconds);
  if (ending.stop === 'duplicate') return acceptedOutcome(requestId, 200, true);
  if (ending.stop === 'accepted') return acceptedOutcome(requestId, 202);
  if (ending.stop === 'ignored') return ignoredOutcome(requestId);
  if (ending.stop === 'body_already_parsed') return bodyAlreadyParsed(requestId, ending, answering.report);
  return refuse(ending, requestId, answering.retryAfterSeconds);
}

function settled(settlement: Settlement, requestId: string, retryAfterSeconds: number): Outcome {
  switch (settlement.status) {
    case 'completed':
      return acceptedOutcome(requestId, 200);
    case 'abandoned':
      return refuse(SHUTTING_DOWN, requestId, retryAfterSeconds);
    case 'failed':
      return refuse({ stop: settlement.reason }, requestId, retryAfterSeconds);
  }
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
export function tag(reached: Verified | Parsed, outcome: Outcome): Outcome {
  if ('event' in reached) {
    const { event } = reached;
    outcome.event = event.id === undefined ? { type: event.type } : { id: event.id, type: event.type };
  }
  outcome.mode = reached.mode;
  if (reached.tenant !== undefined) outcome.tenant = reached.tenant;
  return outcome;
}
