import { type Awaitable, andThen, isThenable } from '../base/awaitable.js';
import type { Outcome } from '../contract/outcome.js';
import type { DurableQueue } from '../contract/queue.js';
import type { TraceSpan } from '../contract/tracing.js';
import type { ParsedEvent } from '../events/catalogue.js';
import type { Mode } from '../signature/secrets.js';
import { checkRequest, type Received } from './1-check-request.js';
import { type Read, readBody } from './2-read-body.js';
import { asLookedUp, nameTenant, type Tenanted, type TenantSignatures } from './3-tenant.js';
import { type Signature, type Verified, verify } from './3-verify.js';
import { type Parsed, parse } from './4-parse.js';
import { dedupeKey, type Keyed, type SignedContent } from './5-dedupe-key.js';
import { claim } from './6-claim.js';
import { handOff } from './6-handoff.js';
import { type ExecuteOptions, execute } from './7-execute.js';
import type { Settlement } from './8-settle.js';
import { type Answering, answer, tag } from './9-answer.js';
import type { Admission } from './admission.js';
import type { Claims } from './claims.js';
import { IGNORED, type Stop } from './stop.js';
import { endStage } from './traced.js';

export interface PipelineParts<Tx> extends ExecuteOptions<Tx>, Answering {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  /** Clock in milliseconds. */
  now: () => number;
  signature: Signature;
  parseEvent: (value: unknown) => ParsedEvent;
  /** What the dedupe key of an event without an id is computed from. */
  signedContent: SignedContent;
  claims: Claims<Tx>;
  /** Durable acknowledgement: the job engine takes keyed events in place of claim, execute and settle. */
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

const SHUTTING_DOWN: Stop = { stop: 'shutting_down' };
const OVERLOADED: Stop = { stop: 'overloaded' };

/**
 * The receiver's pipeline, one request's walk: 1 check the request → 2 read the body → 3 verify (with the
 * `tenant` option, against the secrets of the tenant the request names) → 4 parse →
 * 5 key → 6 claim (or hand off to a job engine) → 7 execute the handlers → 8 settle the claim → 9 answer. Each
 * stage takes the step before and returns the next or a reason to stop. A stage that did not wait is not
 * awaited (see base/awaitable.ts for why). With `span` (the receiver's `tracing` option) the stages that wait
 * get spans of their own under it. close() waits for a request from its verification to its answer.
 */
export function createPipeline<Tx>(
  parts: PipelineParts<Tx>,
): (received: Received, span?: TraceSpan) => Promise<Walked> {
  const { admission } = parts;
  return async function walk(received, span) {
    if (admission.closing) return stopped(received, SHUTTING_DOWN, parts);
    const checked = checkRequest(received);
    if ('stop' in checked) return stopped(received, checked, parts);
    const reading = readBody(received, parts.maxBodyBytes, parts.bodyTimeoutMs);
    const read = isThenable(reading) ? await reading : reading;
    if ('stop' in read) return stopped(received, read, parts);
    let signed: Read | Tenanted = read;
    let { signature } = parts;
    if (parts.tenants) {
      const finding = tenantSignature(read, parts.tenants);
      const found = isThenable(finding) ? await finding : finding;
      if ('stop' in found) return stopped(found.reached, found.stop, parts);
      ({ signed, signature } = found);
    }
    // A span the sampler dropped gets no stage spans: only the handlers and a handoff need its context.
    const staged = span?.recording === false ? undefined : span;
    const verifying = staged?.child('verify');
    const checking = verify(signed, signature, Math.floor(parts.now() / 1000));
    const verified = isThenable(checking) ? await checking : checking;
    if (verifying) endStage(verifying, verified);
    if ('stop' in verified) return stopped(parts.tenants ? tried(signed, signature) : read, verified, parts);
    // Admitted only now: close() waits for verified work, never for a body still uploading.
    if (admission.closing) return stopped(verified, SHUTTING_DOWN, parts);
    admission.enter();
    try {
      const parsed = parse(verified, parts.parseEvent);
      if ('stop' in parsed) return answered(verified, parsed, parts);
      if (parts.ignoring?.[parsed.mode]) return answered(parsed, IGNORED, parts);
      const keying = dedupeKey(parsed, parts.signedContent);
      const keyed = isThenable(keying) ? await keying : keying;
      const ending = parts.queue
        ? handOff(keyed, parts.queue, parts.report, span)
        : runHere(keyed, parts, span);
      // A wait close() gave up on is answered then; what lands later hands back what it took (see Executor).
      return answered(
        keyed,
        isThenable(ending) ? await Promise.race([ending, admission.givenUp]) : ending,
        parts,
      );
    } finally {
      admission.leave();
    }
  };
}

type TenantFound = { signed: Tenanted; signature: Signature } | { reached: Read | Tenanted; stop: Stop };

/** 3 the tenant's signature: the tenant the request names, then its secrets (cached, or looked up). */
function tenantSignature(read: Read, tenants: TenantSignatures): Awaitable<TenantFound> {
  const naming = nameTenant(read, tenants);
  if (isThenable(naming)) return naming.then((stop) => ({ reached: read, stop }));
  if ('stop' in naming) return { reached: read, stop: naming };
  const finding = tenants.signatureOf(naming.tenant, read.requestId);
  // A cached tenant answers at once: no closure, no promise.
  if (!isThenable(finding)) return foundFor(naming, finding);
  return Promise.resolve(finding).then((found) => foundFor(naming, found));
}

/** A tenant's request that did not verify, with the labels of the secrets it was checked with. */
function tried(signed: Read | Tenanted, signature: Signature): Read | Tenanted {
  return { ...signed, secretLabels: signature.secretLabels ?? [] };
}

function foundFor(named: Tenanted, found: Signature | Stop): TenantFound {
  return 'stop' in found
    ? { reached: named, stop: found }
    : { signed: asLookedUp(named, found), signature: found };
}

/** 6 claim → 7 execute → 8 settle, in this process. */
function runHere<Tx>(keyed: Keyed, parts: PipelineParts<Tx>, span?: TraceSpan): Awaitable<Stop | Settlement> {
  // A place in the executor before claiming: a retry of an event turned away here finds it unclaimed.
  if (!parts.executor.reserve()) return parts.admission.closing ? SHUTTING_DOWN : OVERLOADED;
  const claiming = span?.recording === false ? undefined : span?.child('claim');
  return andThen(claim(keyed, parts.claims), (claimed) => {
    if (claiming) endStage(claiming, claimed, storeFailed);
    if ('stop' in claimed) {
      parts.executor.unreserve();
      return claimed;
    }
    return execute(claimed, parts, span);
  });
}

/** Only the store failing fails the claim's span: a duplicate or an event held elsewhere is the store working. */
const storeFailed = (stop: Stop) => stop.stop === 'store_unavailable';

/** The answer of a walk past verification, labelled with the event (once parsed) and the mode. */
function answered<Tx>(
  reached: Verified | Keyed,
  ending: Stop | Settlement,
  parts: PipelineParts<Tx>,
): Awaitable<Walked> {
  return andThen(answer(reached, ending, parts), (outcome) => ({ reached, outcome: tag(reached, outcome) }));
}

function stopped<Tx>(reached: Reached, stop: Stop, parts: PipelineParts<Tx>): Awaitable<Walked> {
  return andThen(answer(reached, stop, parts), (outcome) => {
    const { tenant } = reached as { tenant?: string };
    if (tenant !== undefined) outcome.tenant = tenant;
    return { reached, outcome };
  });
}
