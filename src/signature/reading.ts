import type { Bytes, SignedPiece } from '../base/bytes.js';
import {
  type BodyShapeProblem,
  type MemberSpan,
  scalarValue,
  stringValue,
  withoutMember,
} from './json-members.js';
import type { SignatureProblem } from './profile-text.js';
import { isDigits, type SignatureScan } from './syntaxes.js';

/** What a request carries for its signature, read by the profile's one parser; the verifier checks the rest. */
export interface SignatureReading extends SignatureScan {
  /** Set when nothing can be verified: the reason to answer. */
  failure: 'missing_signature' | 'malformed_signature' | undefined;
  /** Unix seconds (NaN until read). */
  timestamp: number;
  id: string | undefined;
  /** What exactly is wrong when `failure` is set, when the reading can tell. */
  problem: SignatureProblem | undefined;
  /** The body as signed: the raw body, or for a body signature the body without its member. */
  body: SignedPiece;
}

/** Completes a scan into a reading in place (the scan has room for these fields): one object per request. */
export function withReadingFields(scan: SignatureScan, body: SignedPiece): SignatureReading {
  const reading = scan as SignatureReading;
  reading.failure = undefined;
  reading.timestamp = Number.NaN;
  reading.id = undefined;
  reading.problem = undefined;
  reading.body = body;
  return reading;
}

export function failed(
  reading: SignatureReading,
  reason: 'missing_signature' | 'malformed_signature',
  problem?: SignatureProblem,
): SignatureReading {
  reading.failure = reason;
  reading.problem = problem;
  return reading;
}

/**
 * The one top-level signature member, and the body without it (cut from the bytes, see withoutMember). A
 * body that cannot carry the member, or carries it twice or not as a string, is malformed: never guessed at.
 */
export function readBodySignature(
  bytes: Bytes,
  members: MemberSpan[] | BodyShapeProblem | undefined,
  field: string,
  scan: (value: string | undefined) => SignatureScan,
): SignatureReading {
  if (typeof members !== 'object') {
    const reading = withPresence(withReadingFields(scan(undefined), bytes));
    return failed(reading, 'malformed_signature', members);
  }
  const found = members.filter((member) => member.name === field);
  const value = found.length === 1 ? stringValue(bytes, found[0] as MemberSpan) : undefined;
  const reading = withReadingFields(scan(value), bytes);
  if (found.length === 0) return reading;
  if (found.length > 1) return failed(withPresence(reading), 'malformed_signature', 'member_repeated');
  if (value === undefined) return failed(withPresence(reading), 'malformed_signature', 'member_not_string');
  reading.body = withoutMember(bytes, members, members.indexOf(found[0] as MemberSpan));
  return reading;
}

/** A member that is there but unreadable (duplicated, not a string) is present: malformed, not missing. */
function withPresence(reading: SignatureReading): SignatureReading {
  reading.present = true;
  return reading;
}

/** Unix seconds from a body field: a whole number, or ISO 8601 text with an offset. */
export function bodyTimestamp(
  bytes: Bytes,
  members: MemberSpan[] | BodyShapeProblem | undefined,
  field: string,
): number | undefined {
  if (typeof members !== 'object') return undefined;
  const found = members.filter((member) => member.name === field);
  if (found.length !== 1) return undefined;
  const value = scalarValue(bytes, found[0] as MemberSpan);
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (value === undefined) return undefined;
  if (isDigits(value)) return Number(value);
  // An offset is required: a local time would mean something else on every server.
  if (!/(Z|[+-]\d{2}:\d{2})$/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}
