import type { SignatureFailureReason } from './errors.js';

export type ParsedSignatureHeader =
  | { ok: true; timestamp: number; timestampText: string; signatures: string[] }
  | { ok: false; reason: Extract<SignatureFailureReason, 'missing_signature' | 'malformed_signature'> };

/**
 * Parses `t=<unix seconds>,v1=<hex>[,v1=…]`. Items split on `,`, each on its first `=`, whitespace around
 * items ignored, unknown schemes ignored. Exactly one `t` made of digits only, at least one `v1`.
 * Never throws: any string gives a result.
 *
 * It runs on every delivery, so it scans by index instead of slicing and trimming each item: only the
 * values it returns become strings.
 */
export function parseSignatureHeader(header: string | null | undefined): ParsedSignatureHeader {
  if (header === undefined || header === null) return { ok: false, reason: 'missing_signature' };
  const length = header.length;
  let timestampText: string | undefined;
  let ambiguous = false;
  let blank = true;
  const signatures: string[] = [];
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
      if (timestampText !== undefined) ambiguous = true;
      timestampText = header.slice(eq + 1, last);
    } else if (
      keyLength === 2 &&
      header.charCodeAt(first) === 118 /* v */ &&
      header.charCodeAt(first + 1) === 49
    ) {
      signatures.push(header.slice(eq + 1, last));
    }
  }
  // A header of separators and whitespace only (`,`) is still a header: malformed, not missing.
  if (blank && header.trim() === '') return { ok: false, reason: 'missing_signature' };
  if (ambiguous || timestampText === undefined || !isDigits(timestampText) || signatures.length === 0) {
    return { ok: false, reason: 'malformed_signature' };
  }
  return { ok: true, timestamp: Number(timestampText), timestampText, signatures };
}

function isDigits(text: string): boolean {
  if (text.length === 0) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return true;
}

/** Exactly the characters String.prototype.trim removes (ECMAScript WhiteSpace and LineTerminator). */
function isWhitespace(code: number): boolean {
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
