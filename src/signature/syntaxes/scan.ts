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
