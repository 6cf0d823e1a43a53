import type { SignatureFailureReason } from '../contract/reasons.js';

export type ParsedSignatureHeader =
  | { ok: true; timestamp: number; timestampText: string; signatures: string[] }
  | { ok: false; reason: Extract<SignatureFailureReason, 'missing_signature' | 'malformed_signature'> };

/**
 * What a signature header carries before any rule is applied: the verifier applies the rules, the rejection
 * diagnostics count from the same scan, so both describe one reading of the header.
 */
export interface HeaderScan {
  /** False for an absent header or one of whitespace only. */
  present: boolean;
  /** Timestamps the header itself carries (`t=` items), and the first one's text. */
  timestamps: number;
  timestampText: string | undefined;
  /** Signature values as written (any encoding, any length: the verifier sorts out which can match). */
  signatures: string[];
}

export type SignatureSyntax = 't-v1' | 'v1-list' | 'plain';

/** One parser per syntax. */
export const headerScanners: Record<SignatureSyntax, (header: string | null | undefined) => HeaderScan> = {
  't-v1': scanTimestampedHeader,
  'v1-list': scanVersionedList,
  plain: scanPlain,
};

/**
 * Parses `t=<unix seconds>,v1=<hex>[,v1=…]`. Items split on `,`, each on its first `=`, whitespace around
 * items ignored, unknown schemes ignored. Exactly one `t` made of digits only, at least one `v1`.
 * Never throws: any string gives a result.
 */
export function parseSignatureHeader(header: string | null | undefined): ParsedSignatureHeader {
  const scan = scanTimestampedHeader(header);
  if (!scan.present) return { ok: false, reason: 'missing_signature' };
  const timestampText = scan.timestampText;
  if (scan.timestamps !== 1 || !isDigits(timestampText) || scan.signatures.length === 0) {
    return { ok: false, reason: 'malformed_signature' };
  }
  return { ok: true, timestamp: Number(timestampText), timestampText, signatures: scan.signatures };
}

/**
 * The scan of `t=…,v1=…`. It runs on every delivery, so it scans by index instead of slicing and trimming
 * each item: only the values it returns become strings.
 */
function scanTimestampedHeader(header: string | null | undefined): HeaderScan {
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
 * other versions ignored. The timestamp travels in a header of its own.
 */
function scanVersionedList(header: string | null | undefined): HeaderScan {
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

/** The whole header value is one signature. */
function scanPlain(header: string | null | undefined): HeaderScan {
  const scan = emptyScan();
  const value = header?.trim() ?? '';
  scan.present = value !== '';
  if (scan.present) scan.signatures.push(value);
  return scan;
}

/**
 * A scan with room for the fields the verifier's reading adds (failure, timestamp, id, problem, body): completing it
 * then keeps the object's shape, which keeps the per-request path monomorphic.
 */
function emptyScan(): HeaderScan {
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
  } as HeaderScan;
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
