import { isThenable } from '../base/deadline.js';
import { Slots } from '../base/executor.js';
import type { Claims } from '../claims/claim.js';
import type { Report } from '../claims/report.js';
import { type Outcome, REQUEST_ID_HEADER, rejectedOutcome } from '../contract/outcome.js';
import type { DurableQueue } from '../contract/queue.js';
import { type ReasonCode, reasonAnswers } from '../contract/reasons.js';
import type { TraceSpan } from '../contract/tracing.js';
import type { ParsedEvent } from '../events/catalogue.js';
import type { Mode } from '../signature/secrets.js';
import {
  acceptSignature,
  checkRequest,
  type Read,
  type Received,
  readBody,
  type Signature,
  signedInput,
  type Verified,
} from './1-read-verify.js';
import { type Tenanted, type TenantSignatures, tenantSignature, tried } from './2-tenant.js';
import { dedupeKey, type Keyed, type Parsed, parse, type SignedContent } from './3-event.js';
import { handOff } from './4-handoff.js';
import { type RunOptions, runHere, type Waiting } from './4-run.js';
import { type Ending, IGNORED, type Rejection, SHUTTING_DOWN } from './ending.js';
import { endStage } from './traced.js';

export interface PipelineParts<Tx> extends Omit<RunOptions<Tx>, 'closing' | 'waiting'>, Answering {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  /** Clock in milliseconds. */
  now: () => number;
  signature: Signature;
  parseEvent: (value: unknown) => ParsedEvent;
  /** What the dedupe key of an event without an id is computed from. */
  signedContent: SignedContent;
  claims: Claims<Tx>;
  /** Durable acknowledgement: the job engine takes keyed events in place of claim, run and settle. */
  queue?: DurableQueue | undefined;
  admission: Admission;
  /** With the `tenant` option: each request's signature is its tenant's, found here. */
  tenants?: TenantSignatures | undefined;
  /** Modes whose verified events are answered 200 without running handlers (the `modes` option). */
  ignoring?: Readonly<Record<Mode, boolean>> | undefined;
}

/** The furthest step a request reached: what the pipeline learned of it, for the log line of its answer. */
export type Reached = Received | Read | Tenanted | Verified | Parsed | Keyed;

export interface Walked {
  outcome: Outcome;
  reached: Reached;
}

/**
 * The receiver's pipeline, one request's walk, each stage in the file of its number, in the order it runs:
 * 1 check the request and read its body → 2 verify (both in 1-read-verify; with the `tenant` option, against
 * the secrets of the tenant the request names, 2-tenant first) → 3 parse and key → 4 claim, run the handlers
 * and settle (claims/), or hand off to a job engine → 5 answer, below the walk in this file.
 * Each stage takes the step before and returns the next or a rejection. With `span` (the receiver's `tracing`
 * option) the stages that wait get spans of their own under it. close() waits for a request from its
 * verification to its answer.
 */
export function createPipeline<Tx>(
  parts: PipelineParts<Tx>,
): (received: Received, span?: TraceSpan) => Promise<Walked> {
  const { admission } = parts;
  const running: RunOptions<Tx> = { ...parts, closing: () => admission.closing, waiting: admission };
  return async function walk(received, span) {
    if (admission.closing) return answered(received, SHUTTING_DOWN, parts);
    const rejected = checkRequest(received);
    if (rejected) return answered(received, rejected, parts);
    const reading = readBody(received, parts.maxBodyBytes, parts.bodyTimeoutMs);
    const read = ready(reading) ? reading : await reading;
    if ('stop' in read) return answered(received, read, parts);
    let signed: Read | Tenanted = read;
    let { signature } = parts;
    if (parts.tenants) {
      const found = await tenantSignature(read, parts.tenants);
      if ('stop' in found) return answered(found.reached, found.stop, parts);
      ({ signed, signature } = found);
    }
    // A span the sampler dropped gets no stage spans: only the handlers and a handoff need its context.
    const staged = span?.recording === false ? undefined : span;
    const verifying = staged?.child('verify');
    const nowSeconds = Math.floor(parts.now() / 1000);
    const checking = signature.check(signedInput(signed), nowSeconds);
    const checked = ready(checking) ? checking : await checking;
    const verified = acceptSignature(signed, checked, signature, nowSeconds);
    if (verifying) endStage(verifying, 'stop' in verified ? verified.stop : undefined);
    if ('stop' in verified) return answered(parts.tenants ? tried(signed, signature) : read, verified, parts);
    // Admitted only now: close() waits for verified work, never for a body still uploading.
    if (admission.closing) return answered(verified, SHUTTING_DOWN, parts);
    admission.enter();
    try {
      // Answered here without waiting: only body_already_parsed is told to onError first, and reading decided that.
      const parsed = parse(verified, parts.parseEvent);
      if ('stop' in parsed) return answered(verified, parsed, parts);
      if (parts.ignoring?.[parsed.mode]) return answered(parsed, IGNORED, parts);
      const keying = dedupeKey(parsed, parts.signedContent);
      const keyed = ready(keying) ? keying : await keying;
      // A wait close() gave up on is answered then; what lands later hands back what it took (see Executor).
      const ending = parts.queue
        ? admission.orGivenUp(handOff(keyed, parts.queue, parts.report, span))
        : runHere(keyed, running, span);
      return answered(keyed, await ending, parts);
    } finally {
      admission.leave();
    }
  };
}

/**
 * Whether a stage's value is here now. The walk goes on without awaiting one that is: the one place the
 * package answers without a promise when nothing waited (bench/NOTES.md has the measurement).
 */
function ready<T>(value: T | PromiseLike<T>): value is T {
  return !isThenable(value);
}

/** Requests past verification: close() waits for them, and refuses new ones once it started. */
export interface Admission extends Waiting {
  closing: boolean;
  enter(): void;
  leave(): void;
  /** Resolves once every admitted request was answered. */
  settled(): Promise<void>;
  /** What `ending` resolves to, or 503 shutting_down once close() gave up waiting (as Waiting holds it). */
  orGivenUp<T>(ending: Promise<T>): Promise<T | Rejection>;
  /** close() gives up on the admitted requests still waiting. */
  giveUp(): void;
}

/** Counts verified requests not answered yet, so that close() resolves only after their answers. */
export function createAdmission(): Admission {
  let inside = 0;
  let idle: Promise<void> | undefined;
  let resolveIdle: (() => void) | undefined;
  // Each waiting request in a slot of its own, gone once it is answered: not a race with one promise that
  // settles only at close(), which would hold a reaction of every request the receiver ever answered.
  const waiting = new Slots<(ending: Rejection) => void>();
  let gaveUp = false;
  return {
    closing: false,
    enter() {
      inside++;
    },
    leave() {
      inside--;
      if (inside === 0 && resolveIdle) {
        resolveIdle();
        idle = resolveIdle = undefined;
      }
    },
    settled(): Promise<void> {
      if (inside === 0) return Promise.resolve();
      idle ??= new Promise<void>((resolve) => {
        resolveIdle = resolve;
      });
      return idle;
    },
    hold(answer) {
      const slot = waiting.add(answer);
      if (gaveUp) answer(SHUTTING_DOWN);
      return slot;
    },
    release(slot, answer) {
      waiting.remove(slot, answer);
    },
    orGivenUp<T>(ending: Promise<T>): Promise<T | Rejection> {
      return new Promise<T | Rejection>((resolve, reject) => {
        const slot = this.hold(resolve);
        ending.then(
          (value) => {
            waiting.remove(slot, resolve);
            resolve(value);
          },
          (error: unknown) => {
            waiting.remove(slot, resolve);
            reject(error);
          },
        );
      });
    },
    giveUp() {
      gaveUp = true;
      for (const resolve of waiting.items()) resolve(SHUTTING_DOWN);
    },
  };
}

/**
 * 5 the answer of a walk, labelled with what it reached: the event once parsed, the mode, the tenant. It waits
 * only to tell onError of a body already parsed; every other ending is answered as it is.
 */
function answered<Tx>(reached: Reached, ending: Ending, parts: PipelineParts<Tx>): Walked | Promise<Walked> {
  if ('stop' in ending && ending.stop === 'body_already_parsed') {
    const { requestId } = reached;
    return bodyAlreadyParsed(requestId, ending, parts.report).then((outcome) => ({
      reached,
      outcome: tag(reached, outcome),
    }));
  }
  return { reached, outcome: tag(reached, answer(reached, ending, parts)) };
}

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

/** The answer of a walk: how it was acknowledged, or why a stage rejected it. */
export function answer(received: Received, ending: Ending, answering: Answering): Outcome {
  const { requestId } = received;
  if ('ack' in ending) {
    if (ending.ack === 'processed') return acceptedOutcome(requestId, 200);
    if (ending.ack === 'duplicate') return acceptedOutcome(requestId, 200, true);
    if (ending.ack === 'accepted') return acceptedOutcome(requestId, 202);
    return ignoredOutcome(requestId);
  }
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

/** A body already parsed is also told to onError: the receiver's mounting is at fault, not the sender. */
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

const IGNORED_BODY = '{"received":true,"ignored":true}';
const IGNORED_LENGTH = String(IGNORED_BODY.length);

/** A verified event of a mode the receiver ignores: 200, so the service stops retrying it. */
function ignoredOutcome(requestId: string): Outcome {
  return {
    status: 200,
    headers: {
      'content-type': 'application/json',
      'content-length': IGNORED_LENGTH,
      [REQUEST_ID_HEADER]: requestId,
    },
    body: IGNORED_BODY,
    requestId,
    ignored: true,
  };
}
