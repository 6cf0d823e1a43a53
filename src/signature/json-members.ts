import { type Bytes, concatBytes, toBytes } from '../base/bytes.js';

/**
 * Where one top-level member of a JSON object sits in the body's bytes: its key's opening quote is at
 * `start`, its value runs from `valueStart` to just before `end`.
 */
export interface MemberSpan {
  name: string;
  start: number;
  valueStart: number;
  end: number;
}

/** Why a body cannot carry a top-level member: it is no JSON text at all, or not an object. */
export type BodyShapeProblem = 'body_not_json' | 'body_not_object';

const decoder = new TextDecoder();

/**
 * The top-level members of a JSON object body, in order, or why there are none to read. Works on the bytes:
 * every structural character of JSON is ASCII, and no byte of a multi-byte UTF-8 sequence is, so no decoding
 * is needed to find them. Only the structure is read (strings, nesting, separators): values are not parsed,
 * nested objects are skipped whole, so a `signature` key inside `data` is never taken for the top-level one.
 */
export function topLevelMembers(bytes: Bytes): MemberSpan[] | BodyShapeProblem {
  let at = skipSpace(bytes, 0);
  const first = bytes[at];
  if (first !== 123 /* { */)
    return first === 91 || first === 34 || isScalarStart(first) ? 'body_not_object' : 'body_not_json';
  at = skipSpace(bytes, at + 1);
  const members: MemberSpan[] = [];
  if (bytes[at] === 125 /* } */) return skipSpace(bytes, at + 1) === bytes.length ? members : 'body_not_json';
  for (;;) {
    const start = at;
    const keyEnd = stringEnd(bytes, at);
    if (keyEnd < 0) return 'body_not_json';
    const name = decodeString(bytes.subarray(start, keyEnd));
    if (name === undefined) return 'body_not_json';
    at = skipSpace(bytes, keyEnd);
    if (bytes[at] !== 58 /* : */) return 'body_not_json';
    const valueStart = skipSpace(bytes, at + 1);
    const end = valueEnd(bytes, valueStart);
    if (end < 0) return 'body_not_json';
    members.push({ name, start, valueStart, end });
    at = skipSpace(bytes, end);
    const next = bytes[at];
    if (next === 125) return skipSpace(bytes, at + 1) === bytes.length ? members : 'body_not_json';
    if (next !== 44 /* , */) return 'body_not_json';
    at = skipSpace(bytes, at + 1);
  }
}

/**
 * The body without member `index`: the one cut rule of a body signature, shared by the verifier and the
 * signer. Removed are the member's key, the colon, its value, exactly one comma joining it to a neighbour,
 * and the JSON whitespace (space, tab, LF, CR) between those; nothing else:
 * - a member followed by another: from its key's opening quote up to the next member's key (its own comma
 *   and the whitespace on both sides of that comma go; the whitespace before its key stays);
 * - the last of several: from the end of the previous member's value up to the end of its own value (the
 *   comma before it and the whitespace on both sides go; the whitespace after its value stays);
 * - the only member: its key to the end of its value.
 * Every other byte stays as received: nothing is parsed or re-serialized.
 */
export function withoutMember(bytes: Bytes, members: readonly MemberSpan[], index: number): Bytes {
  const member = members[index] as MemberSpan;
  const next = members[index + 1];
  const previous = members[index - 1];
  const [from, to] = next
    ? [member.start, next.start]
    : previous
      ? [previous.end, member.end]
      : [member.start, member.end];
  return concatBytes([bytes.subarray(0, from), bytes.subarray(to)]);
}

/**
 * The inverse of withoutMember for the last position: `,"name":value` right after the last member's value
 * (or `"name":value` right after `{` in an empty object), so that the cut gives back `bytes` exactly.
 */
export function withMemberLast(bytes: Bytes, members: readonly MemberSpan[], member: string): Bytes {
  const last = members[members.length - 1];
  const at = last ? last.end : bytes.indexOf(123) + 1;
  return concatBytes([bytes.subarray(0, at), toBytes(`${last ? ',' : ''}${member}`), bytes.subarray(at)]);
}

/**
 * Whether a member named `name` sits anywhere below the top level; read on the rejection path only, to say
 * why a body signature is missing rather than guess. Never throws (a body too deep to walk counts as none).
 */
export function hasNestedMember(bytes: Bytes, name: string): boolean {
  const below = (value: unknown): boolean =>
    typeof value === 'object' &&
    value !== null &&
    Object.entries(value).some(([key, inner]) => key === name || below(inner));
  try {
    const parsed: unknown = JSON.parse(decoder.decode(bytes));
    return typeof parsed === 'object' && parsed !== null && Object.values(parsed).some(below);
  } catch {
    return false;
  }
}

function skipSpace(bytes: Bytes, at: number): number {
  for (;;) {
    const code = bytes[at];
    if (code !== 32 && code !== 9 && code !== 10 && code !== 13) return at;
    at++;
  }
}

function isScalarStart(code: number | undefined): boolean {
  return (
    code !== undefined &&
    (code === 45 || (code >= 48 && code <= 57) || code === 116 || code === 102 || code === 110)
  );
}

/** Index just past the closing quote of the string starting at `at`, or -1. */
function stringEnd(bytes: Bytes, at: number): number {
  if (bytes[at] !== 34 /* " */) return -1;
  for (let i = at + 1; i < bytes.length; i++) {
    const code = bytes[i];
    if (code === 92 /* \ */) i++;
    else if (code === 34) return i + 1;
  }
  return -1;
}

/** Index just past the value starting at `at` (nested objects and arrays skipped whole), or -1. */
function valueEnd(bytes: Bytes, at: number): number {
  const first = bytes[at];
  if (first === 34) return stringEnd(bytes, at);
  if (first !== 123 && first !== 91 /* [ */) {
    let i = at;
    while (i < bytes.length && !isValueDelimiter(bytes[i] as number)) i++;
    return i === at ? -1 : i;
  }
  let depth = 0;
  for (let i = at; i < bytes.length; i++) {
    const code = bytes[i];
    if (code === 34) {
      i = stringEnd(bytes, i) - 1;
      if (i < 0) return -1;
    } else if (code === 123 || code === 91) depth++;
    else if (code === 125 || code === 93) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

function isValueDelimiter(code: number): boolean {
  return (
    code === 44 || code === 125 || code === 93 || code === 32 || code === 9 || code === 10 || code === 13
  );
}

/**
 * A JSON string token as JSON reads it (`"sig\u006eature"` is `signature`), or undefined when it is not a valid
 * one: a raw control character or a bad escape would otherwise pass here and fail the receiver's JSON.parse.
 */
function decodeString(raw: Bytes): string | undefined {
  let escaped = false;
  for (const code of raw) {
    if (code < 0x20) return undefined;
    if (code === 92) escaped = true;
  }
  const text = decoder.decode(raw);
  if (!escaped) return text.slice(1, -1);
  try {
    return JSON.parse(text) as string;
  } catch {
    return undefined;
  }
}

/** A member's value as a string, when it is a valid JSON string; undefined otherwise. */
export function stringValue(bytes: Bytes, member: MemberSpan): string | undefined {
  if (bytes[member.valueStart] !== 34) return undefined;
  return decodeString(bytes.subarray(member.valueStart, member.end));
}

/** A member's value parsed, when it is a number or a string; undefined otherwise. */
export function scalarValue(bytes: Bytes, member: MemberSpan): string | number | undefined {
  const asString = stringValue(bytes, member);
  if (asString !== undefined) return asString;
  const number = Number(decoder.decode(bytes.subarray(member.valueStart, member.end)));
  return Number.isFinite(number) ? number : undefined;
}
