import type { Bytes, SignedPiece } from '../base/bytes.js';
import {
  type BodyShapeProblem,
  type MemberSpan,
  scalarValue,
  stringValue,
  withoutMember,
} from './json-members.js';

// Reading a signature: what a signature value carries (its scan), each way of writing one (a SyntaxSpec: its
// parser, its writer and how messages describe it) and the table of them by name, then the scan completed into
// the reading the verifier checks, from a header or from a member of the body.

/**
 * What a signature value carries before any rule is applied: the verifier applies the rules, the rejection
 * diagnostics count from the same scan, so both describe one reading of the value.
 */
export interface SignatureScan {
  /** False for an absent value or one of whitespace only. */
  present: boolean;
  /** Timestamps the value itself carries (`t=` items), and the first one's text. */
  timestamps: number;
  timestampText: string | undefined;
  /** Signature values as written (any encoding, any length: the verifier sorts out which can match). */
  signatures: string[];
}

/** One way a signature value is written: its parser, its writer and how messages describe it, together. */
export interface SyntaxSpec {
  /** Reads a header value or body member. Never throws: any string gives a scan. */
  scan(value: string | null | undefined): SignatureScan;
  /** Lays out one encoded signature for sending. */
  format(timestampText: string, encoded: string): string;
  /** The value's shape in messages, for a digest written as `digest` (for example `<hex>`). */
  shape(digest: string): string;
  /** What the value needs, as a malformed_signature message says it. */
  rule: string;
  /** Whether the value carries its own timestamp (then the profile's timestamp defaults to it). */
  carriesTimestamp: boolean;
}

/**
 * `t=<unix seconds>,v1=<signature>[,v1=…]`. Items split on `,`, each on its first `=`, whitespace around
 * items ignored, unknown versions ignored. Valid with exactly one `t` of digits only and at least one `v1`.
 */
export const timestampedSyntax: SyntaxSpec = {
  scan: scanTimestamped,
  format: (timestampText, encoded) => `t=${timestampText},v1=${encoded}`,
  shape: (digest) => `t=<unix seconds>,v1=${digest}`,
  rule: 'it needs exactly one t (digits only) and at least one v1',
  carriesTimestamp: true,
};

/**
 * It runs on every delivery, so it scans by index instead of slicing and trimming each item: only the values
 * it returns become strings.
 */
export function scanTimestamped(header: string | null | undefined): SignatureScan {
  const scan = emptyScan();
  if (header === undefined || header === null) return scan;
  const length = header.length;
  let blank = true;
  let start = 0;
  while (start <= length) {
    let end = header.indexOf(',', start);
    if (end === -1) end = length;
    let first = start;
    let last = end;
    while (first < last && isWhitespace(header.charCodeAt(first))) first++;
    while (last > first && isWhitespace(header.charCodeAt(last - 1))) last--;
    start = end + 1;
    if (first === last) continue;
    blank = false;
    const eq = header.indexOf('=', first);
    if (eq === -1 || eq >= last) continue;
    const keyLength = eq - first;
    if (keyLength === 1 && header.charCodeAt(first) === 116 /* t */) {
      if (scan.timestamps++ === 0) scan.timestampText = header.slice(eq + 1, last);
    } else if (
      keyLength === 2 &&
      header.charCodeAt(first) === 118 /* v */ &&
      header.charCodeAt(first + 1) === 49
    ) {
      scan.signatures.push(header.slice(eq + 1, last));
    }
  }
  // A header of separators and whitespace only (`,`) is still a header: malformed, not missing.
  scan.present = !blank || header.trim() !== '';
  return scan;
}

/**
 * Standard Webhooks' `v1,<signature> v1,<signature>`: items split on spaces, each on its first `,`; items of
 * other versions ignored. The timestamp travels elsewhere.
 */
export const versionedListSyntax: SyntaxSpec = {
  scan: scanVersionedList,
  format: (_timestampText, encoded) => `v1,${encoded}`,
  shape: (digest) => `v1,${digest}[ v1,${digest}…]`,
  rule: 'it needs at least one v1,<signature> item, items separated by spaces',
  carriesTimestamp: false,
};

function scanVersionedList(header: string | null | undefined): SignatureScan {
  const scan = emptyScan();
  if (header === undefined || header === null || header.trim() === '') return scan;
  scan.present = true;
  let start = 0;
  while (start <= header.length) {
    let end = header.indexOf(' ', start);
    if (end === -1) end = header.length;
    if (header.startsWith('v1,', start) && end >= start + 3)
      scan.signatures.push(header.slice(start + 3, end));
    start = end + 1;
  }
  return scan;
}

/** The whole value is one signature; the timestamp travels elsewhere. */
export const plainSyntax: SyntaxSpec = {
  scan: scanPlain,
  format: (_timestampText, encoded) => encoded,
  shape: (digest) => digest,
  rule: 'the whole value is the signature',
  carriesTimestamp: false,
};

function scanPlain(header: string | null | undefined): SignatureScan {
  const scan = emptyScan();
  const value = header?.trim() ?? '';
  scan.present = value !== '';
  if (scan.present) scan.signatures.push(value);
  return scan;
}

/** The name a profile config gives a signature syntax: one per line of the table below. */
export type SignatureSyntax = 't-v1' | 'v1-list' | 'plain';

/**
 * Every signature syntax by its name. A new syntax is a SyntaxSpec above, its name in SignatureSyntax and one line
 * here: the config check, the profile, its messages and the diagnostics read this table.
 */
export const syntaxes = {
  't-v1': timestampedSyntax,
  'v1-list': versionedListSyntax,
  plain: plainSyntax,
} as const satisfies Record<SignatureSyntax, SyntaxSpec>;

export const syntaxNames = Object.keys(syntaxes) as SignatureSyntax[];

/**
 * A scan with room for the fields the verifier's reading adds (failure, timestamp, id, problem, body): completing it
 * then keeps the object's shape, which keeps the per-request path monomorphic.
 */
export function emptyScan(): SignatureScan {
  return {
    present: false,
    timestamps: 0,
    timestampText: undefined,
    signatures: [],
    failure: undefined,
    timestamp: Number.NaN,
    id: undefined,
    problem: undefined,
    body: '',
  } as SignatureScan;
}

export function isDigits(text: string | undefined): text is string {
  if (text === undefined || text.length === 0) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return true;
}

/** Exactly the characters String.prototype.trim removes (ECMAScript WhiteSpace and LineTerminator). */
export function isWhitespace(code: number): boolean {
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  if (code < 160) return false;
  return (
    code === 160 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** What exactly is wrong with a signature that cannot be checked, when the reading can tell. */
export type SignatureProblem =
  | BodyShapeProblem
  | 'member_repeated'
  | 'member_not_string'
  | 'member_nested'
  | 'signature_syntax'
  | 'timestamp_invalid'
  | 'id_missing';

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
