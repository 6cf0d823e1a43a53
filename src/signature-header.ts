import type { SignatureFailureReason } from './errors.js';

export type ParsedSignatureHeader =
  | { ok: true; timestamp: number; timestampText: string; signatures: string[] }
  | { ok: false; reason: Extract<SignatureFailureReason, 'missing_signature' | 'malformed_signature'> };

const DIGITS = /^[0-9]+$/;

/**
 * Parses `t=<unix seconds>,v1=<hex>[,v1=…]`. Items split on `,`, each on its first `=`, whitespace around
 * items ignored, unknown schemes ignored. Exactly one `t` made of digits only, at least one `v1`.
 * Never throws: any string gives a result.
 */
export function parseSignatureHeader(header: string | null | undefined): ParsedSignatureHeader {
  if (header === undefined || header === null || header.trim() === '') {
    return { ok: false, reason: 'missing_signature' };
  }
  let timestampText: string | undefined;
  let ambiguous = false;
  const signatures: string[] = [];
  let start = 0;
  while (start <= header.length) {
    let end = header.indexOf(',', start);
    if (end === -1) end = header.length;
    const item = header.slice(start, end).trim();
    start = end + 1;
    const eq = item.indexOf('=');
    if (eq === -1) continue;
    const key = item.slice(0, eq);
    if (key === 't') {
      if (timestampText !== undefined) ambiguous = true;
      timestampText = item.slice(eq + 1);
    } else if (key === 'v1') {
      signatures.push(item.slice(eq + 1));
    }
  }
  if (ambiguous || timestampText === undefined || !DIGITS.test(timestampText) || signatures.length === 0) {
    return { ok: false, reason: 'malformed_signature' };
  }
  return { ok: true, timestamp: Number(timestampText), timestampText, signatures };
}
