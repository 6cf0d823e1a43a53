import type { Outcome } from '../contract/outcome.js';
import type { TraceSpan } from '../contract/tracing.js';
import type { DurableQueue } from '../durable/port.js';
import type { ParsedEvent } from '../events/catalogue.js';
import type { HandlerRegistry } from '../receiver/handlers.js';
import { checkRequest, type Received } from './1-check-request.js';
import { type Read, readBody } from './2-read-body.js';
import { type Signature, type Verified, verify } from './3-verify.js';
import { type Parsed, parse } from './4-parse.js';
import { dedupeKey, type Keyed, type SignedContent } from './5-dedupe-key.js';
import { type Claimed, type Claims, claim } from './6-claim.js';
import { handOff } from './6-handoff.js';
import { type ExecuteOptions, execute } from './7-execute.js';
import type { Settlement } from './8-settle.js';
import { type Answering, answer, tag } from './9-answer.js';
import type { Admission } from './admission.js';
import { withTransaction } from './handler-context.js';
import type { Stop } from './stop.js';
import { endStage, traceHandlers } from './traced.js';

export interface PipelineParts<Tx> extends ExecuteOptions, Answering {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  /** Clock in milliseconds. */
  now: () => number;
  signature: Signature;
  parseEvent: (value: unknown) => ParsedEvent;
  /** What the dedupe key of an event without an id is computed from. */
  signedContent: SignedContent;
  registry: HandlerRegistry<never, Tx>;
  claims: Claims<Tx>;
  /** Durable acknowledgement: the job engine takes keyed events in place of claim, execute and settle. */
  queue?: DurableQueue | undefined;
  admission: Admission;
}

/** The furthest step a request reached: what the pipeline learned of it, for the log line of its answer. */
export type Reached = Received | Read | Verified | Parsed | Keyed;

export interface Walked {
  outcome: Outcome;
  reached: Reached;
}

const SHUTTING_DOWN: Stop = { stop: 'shutting_down' };
const OVERLOADED: Stop = { stop: 'overloaded' };

/**
 * The receiver's pipeline, one request's walk: 1 check the request → 2 read the body → 3 verify → 4 parse →
 * 5 key → 6 claim (or hand off to a job engine) → 7 execute → 8 settle → 9 answer. Each stage takes the step
 * before and returns the next or a reason to stop; only stages with real waiting (a streamed body, async
 * crypto, the store, the handlers) cost a promise, and a walk in which nothing waited returns its answer as it
 * is. With `span` (the receiver's `tracing` option) the stages that wait get spans of their own under it.
 */
export function createPipeline<Tx>(
  parts: PipelineParts<Tx>,
): (received: Received, span?: TraceSpan) => Walked | Promise<Walked> {
  const { admission } = parts;
  return function walk(received, span) {
    if (admission.closing) return stopped(received, SHUTTING_DOWN, parts);
    const checked = checkRequest(received);
    if ('stop' in checked) return stopped(received, checked, parts);
    const read = readBody(received, parts.maxBodyBytes, parts.bodyTimeoutMs);
    if (read instanceof Promise) return read.then((body) => verifyRead(received, body, parts, span));
    return verifyRead(received, read, parts, span);
  };
}

/** 3 verify, then the stages of a verified request, which close() waits for. */
function verifyRead<Tx>(
  received: Received,
  read: Read | Stop,
  parts: PipelineParts<Tx>,
  span: TraceSpan | undefined,
): Walked | Promise<Walked> {
  if ('stop' in read) return stopped(received, read, parts);
  const verifying = span?.child('verify');
  const verified = verify(read, parts.signature, Math.floor(parts.now() / 1000));
  if (verified instanceof Promise) return verified.then((step) => admit(read, step, parts, span, verifying));
  return admit(read, verified, parts, span, verifying);
}

/** Admits a verified request: close() waits for it until its answer, whether it comes at once or later. */
function admit<Tx>(
  read: Read,
  verified: Verified | Stop,
  parts: PipelineParts<Tx>,
  span: TraceSpan | undefined,
  verifying: TraceSpan | undefined,
): Walked | Promise<Walked> {
  if (verifying) endStage(verifying, verified);
  if ('stop' in verified) return stopped(read, verified, parts);
  const { admission } = parts;
  // Admitted only now: close() waits for verified work, never for a body still uploading.
  if (admission.closing) return stopped(verified, SHUTTING_DOWN, parts);
  admission.enter();
  let walked: Walked | Promise<Walked>;
  try {
    walked = processVerified(verified, parts, span);
  } catch (error) {
    admission.leave();
    throw error;
  }
  if (!(walked instanceof Promise)) {
    admission.leave();
    return walked;
  }
  return walked.then(
    (done) => {
      admission.leave();
      return done;
    },
    (error: unknown) => {
      admission.leave();
      throw error;
    },
  );
}

/** 4 parse → 5 key → 6 claim or hand off → … → 9 answer. */
function processVerified<Tx>(
  verified: Verified,
  parts: PipelineParts<Tx>,
  span: TraceSpan | undefined,
): Walked | Promise<Walked> {
  const parsed = parse(verified, parts.parseEvent);
  if ('stop' in parsed) return answered(verified, parsed, parts);
  const keyed = dedupeKey(parsed, parts.signedContent);
  if (keyed instanceof Promise) return keyed.then((step) => processKeyed(step, parts, span));
  return processKeyed(keyed, parts, span);
}

function processKeyed<Tx>(keyed: Keyed, parts: PipelineParts<Tx>, span: TraceSpan | undefined) {
  const ending = parts.queue ? handOff(keyed, parts.queue, parts.report, span) : run(keyed, parts, span);
  if (ending instanceof Promise) return ending.then((end) => answered(keyed, end, parts));
  return answered(keyed, ending, parts);
}

/**
 * 6 claim → 7 execute → 8 settle, in this process. Not an async function, like the stages: a request costs a
 * promise only where something waits (a store that answers later, a handler that returns a promise, a place
 * in the executor's queue), since each one costs a turn of the microtask queue on every request.
 */
function run<Tx>(
  keyed: Keyed,
  parts: PipelineParts<Tx>,
  span?: TraceSpan,
): Stop | Settlement | Promise<Stop | Settlement> {
  // A place in the executor before claiming: a retry of an event turned away here finds it unclaimed.
  if (!parts.executor.reserve()) return parts.admission.closing ? SHUTTING_DOWN : OVERLOADED;
  const { event, handlerContext } = keyed;
  const dispatch = (tx: Tx) => parts.registry.dispatchNow(event, withTransaction(handlerContext, tx));
  const claiming = span?.child('claim');
  const claimed = claim(keyed, parts.claims, span ? traceHandlers(span, dispatch) : dispatch);
  if (claimed instanceof Promise) return claimed.then((taken) => executeClaimed(taken, parts, claiming));
  return executeClaimed(claimed, parts, claiming);
}

/** Only the store failing fails the claim's span: a duplicate or an event held elsewhere is the store working. */
const storeFailed = (stop: Stop) => stop.stop === 'store_unavailable';

function executeClaimed<Tx>(
  claimed: Claimed<Tx> | Stop,
  parts: PipelineParts<Tx>,
  claiming: TraceSpan | undefined,
): Stop | Settlement | Promise<Stop | Settlement> {
  if (claiming) endStage(claiming, claimed, storeFailed);
  if ('stop' in claimed) {
    parts.executor.unreserve();
    return claimed;
  }
  return execute(claimed, parts);
}

/** The answer of a walk past verification, labelled with the event (once parsed) and the mode. */
function answered<Tx>(
  reached: Verified | Keyed,
  ending: Stop | Settlement,
  parts: PipelineParts<Tx>,
): Walked | Promise<Walked> {
  const outcome = answer(reached, ending, parts);
  if (outcome instanceof Promise) return outcome.then((told) => ({ reached, outcome: tag(reached, told) }));
  return { reached, outcome: tag(reached, outcome) };
}

function stopped<Tx>(reached: Reached, stop: Stop, parts: PipelineParts<Tx>): Walked | Promise<Walked> {
  const outcome = answer(reached, stop, parts);
  if (outcome instanceof Promise) return outcome.then((told) => ({ reached, outcome: told }));
  return { reached, outcome };
}
