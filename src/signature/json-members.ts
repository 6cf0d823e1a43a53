/** Where one top-level member of a JSON object sits in the text: `"key"` starts at `start`, its value ends at `end`. */
export interface MemberSpan {
  name: string;
  start: number;
  valueStart: number;
  end: number;
}

/**
 * The top-level members of a JSON object text, in order, or undefined when the text is not one object.
 * Only the structure is read (strings, nesting, separators): values are not parsed, nested objects are
 * skipped whole, so a `signature` key inside `data` is never taken for the top-level one.
 */
export function topLevelMembers(text: string): MemberSpan[] | undefined {
  let at = skipSpace(text, 0);
  if (text.charCodeAt(at) !== 123 /* { */) return undefined;
  at = skipSpace(text, at + 1);
  const members: MemberSpan[] = [];
  if (text.charCodeAt(at) === 125 /* } */)
    return skipSpace(text, at + 1) === text.length ? members : undefined;
  for (;;) {
    const start = at;
    const keyEnd = stringEnd(text, at);
    if (keyEnd < 0) return undefined;
    const name = decodeKey(text.slice(start, keyEnd));
    if (name === undefined) return undefined;
    at = skipSpace(text, keyEnd);
    if (text.charCodeAt(at) !== 58 /* : */) return undefined;
    const valueStart = skipSpace(text, at + 1);
    const end = valueEnd(text, valueStart);
    if (end < 0) return undefined;
    members.push({ name, start, valueStart, end });
    at = skipSpace(text, end);
    const next = text.charCodeAt(at);
    if (next === 125 /* } */) return skipSpace(text, at + 1) === text.length ? members : undefined;
    if (next !== 44 /* , */) return undefined;
    at = skipSpace(text, at + 1);
  }
}

/**
 * The text without member `index`, together with the separator that joins it to a neighbour: from its key to
 * the next member's key, or, when it is the last of several, from the end of the previous member's value.
 * Whitespace elsewhere is kept, byte for byte.
 */
export function withoutMember(text: string, members: readonly MemberSpan[], index: number): string {
  const member = members[index] as MemberSpan;
  const next = members[index + 1];
  if (next) return text.slice(0, member.start) + text.slice(next.start);
  const previous = members[index - 1];
  if (previous) return text.slice(0, previous.end) + text.slice(member.end);
  return text.slice(0, member.start) + text.slice(member.end);
}

/**
 * The inverse of withoutMember for the last position: `"name":value` after the last member's value (or right
 * after `{` in an empty object), so that removing it gives back `text` exactly.
 */
export function withMemberLast(text: string, members: readonly MemberSpan[], member: string): string {
  const last = members[members.length - 1];
  const at = last ? last.end : text.indexOf('{') + 1;
  return `${text.slice(0, at)}${last ? ',' : ''}${member}${text.slice(at)}`;
}

function skipSpace(text: string, at: number): number {
  for (;;) {
    const code = text.charCodeAt(at);
    if (code !== 32 && code !== 9 && code !== 10 && code !== 13) return at;
    at++;
  }
}

/** Index just past the closing quote of the string starting at `at`, or -1. */
function stringEnd(text: string, at: number): number {
  if (text.charCodeAt(at) !== 34 /* " */) return -1;
  for (let i = at + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 92 /* \ */) i++;
    else if (code === 34) return i + 1;
  }
  return -1;
}

/** Index just past the value starting at `at` (nested objects and arrays skipped whole), or -1. */
function valueEnd(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === 34) return stringEnd(text, at);
  if (first !== 123 && first !== 91 /* [ */) {
    let i = at;
    while (i < text.length && !',}] \t\n\r'.includes(text.charAt(i))) i++;
    return i === at ? -1 : i;
  }
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 34) {
      i = stringEnd(text, i) - 1;
      if (i < 0) return -1;
    } else if (code === 123 || code === 91) depth++;
    else if (code === 125 || code === 93) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** A key as JSON reads it, escapes decoded (`"sig\u006eature"` is `signature`); undefined when invalid. */
function decodeKey(raw: string): string | undefined {
  if (!raw.includes('\\')) return raw.slice(1, -1);
  try {
    return JSON.parse(raw) as string;
  } catch {
    return undefined;
  }
}

/** A member's value as a string, when it is a JSON string; undefined otherwise. */
export function stringValue(text: string, member: MemberSpan): string | undefined {
  if (text.charCodeAt(member.valueStart) !== 34) return undefined;
  const raw = text.slice(member.valueStart, member.end);
  if (!raw.includes('\\')) return raw.slice(1, -1);
  try {
    return JSON.parse(raw) as string;
  } catch {
    return undefined;
  }
}

/** A member's value parsed, when it is a number or a string; undefined otherwise. */
export function scalarValue(text: string, member: MemberSpan): string | number | undefined {
  const asString = stringValue(text, member);
  if (asString !== undefined) return asString;
  const number = Number(text.slice(member.valueStart, member.end));
  return Number.isFinite(number) ? number : undefined;
}
