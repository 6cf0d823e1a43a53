import type { Claims } from '../claims/claim.js';
import type { Outcome } from '../contract/outcome.js';
import type { DurableQueue } from '../contract/queue.js';
import type { TraceSpan } from '../contract/tracing.js';
import type { ParsedEvent } from '../events/catalogue.js';
import type { Mode } from '../signature/secrets.js';
import { checkRequest, type Read, type Received, readBody } from './1-read.js';
import { type Tenanted, type TenantSignatures, tenantSignature, tried } from './2-tenant.js';
import { type Signature, type Verified, verify } from './2-verify.js';
import { dedupeKey, type Keyed, type Parsed, parse, type SignedContent } from './3-event.js';
import { handOff } from './4-handoff.js';
import { type RunOptions, runHere } from './4-run.js';
import { type Answering, answer, tag } from './5-answer.js';
import { type Ending, IGNORED, SHUTTING_DOWN } from './ending.js';
import type { Admission } from './executor.js';
import { endStage } from './traced.js';

export interface PipelineParts<Tx> extends Omit<RunOptions<Tx>, 'closing'>, Answering {
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
 * 1 check the request and read its body → 2 verify (with the `tenant` option, against the secrets of the tenant
 * the request names, 2-tenant first) → 3 parse and key → 4 claim, run the handlers and settle (claims/), or
 * hand off to a job engine → 5 answer.
 * Each stage takes the step before and returns the next or a rejection. With `span` (the receiver's `tracing`
 * option) the stages that wait get spans of their own under it. close() waits for a request from its
 * verification to its answer.
 */
export function createPipeline<Tx>(
  parts: PipelineParts<Tx>,
): (received: Received, span?: TraceSpan) => Promise<Walked> {
  const { admission } = parts;
  const running: RunOptions<Tx> = { ...parts, closing: () => admission.closing };
  return async function walk(received, span) {
    if (admission.closing) return answered(received, SHUTTING_DOWN, parts);
    const rejected = checkRequest(received);
    if (rejected) return answered(received, rejected, parts);
    const read = await readBody(received, parts.maxBodyBytes, parts.bodyTimeoutMs);
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
    const verified = await verify(signed, signature, Math.floor(parts.now() / 1000));
    if (verifying) endStage(verifying, 'stop' in verified ? verified.stop : undefined);
    if ('stop' in verified) return answered(parts.tenants ? tried(signed, signature) : read, verified, parts);
    // Admitted only now: close() waits for verified work, never for a body still uploading.
    if (admission.closing) return answered(verified, SHUTTING_DOWN, parts);
    admission.enter();
    try {
      const parsed = parse(verified, parts.parseEvent);
      if ('stop' in parsed) return await answered(verified, parsed, parts);
      if (parts.ignoring?.[parsed.mode]) return await answered(parsed, IGNORED, parts);
      const keyed = await dedupeKey(parsed, parts.signedContent);
      const ending = parts.queue
        ? handOff(keyed, parts.queue, parts.report, span)
        : runHere(keyed, running, span);
      // A wait close() gave up on is answered then; what lands later hands back what it took (see Executor).
      return await answered(keyed, await admission.orGivenUp(ending), parts);
    } finally {
      admission.leave();
    }
  };
}

/** 5 the answer of a walk, labelled with what it reached: the event once parsed, the mode, the tenant. */
async function answered<Tx>(reached: Reached, ending: Ending, parts: PipelineParts<Tx>): Promise<Walked> {
  return { reached, outcome: tag(reached, await answer(reached, ending, parts)) };
}
