import { type SignedPiece, utf8Text } from '../base/bytes.js';
import type { ParsedEvent } from '../events/catalogue.js';
import type { Verified } from './3-verify.js';
import type { Stop } from './stop.js';

/** A verified request whose body is an event of the catalogue (or of a type it does not know). */
export interface Parsed extends Verified {
  readonly event: { type: string; id?: string };
}

const INVALID_JSON: Stop = { stop: 'invalid_json' };

/**
 * JSON, then the event's schema. A UTF-8 byte order mark before the JSON text is ignored (RFC 8259 lets a
 * parser do so), the same whatever the body's form: Node's Buffer decoding keeps the mark and TextDecoder drops
 * it, so without one rule the same signed bytes would get different answers in different runtimes.
 */
export function parse(verified: Verified, parseEvent: (value: unknown) => ParsedEvent): Parsed | Stop {
  let json: unknown;
  try {
    json = JSON.parse(jsonText(verified.body));
  } catch {
    return INVALID_JSON;
  }
  const parsed = parseEvent(json);
  if (parsed.ok) {
    const { request, requestId, body, mode, timestamp, messageId, tenant } = verified;
    return { request, requestId, body, mode, timestamp, messageId, tenant, event: parsed.event };
  }
  const paths = parsed.issues.map((issue) => issue.path || '(body)').join(', ');
  return {
    stop: 'invalid_event',
    message: `The event does not match its schema at: ${paths}.`,
    issues: parsed.issues,
  };
}

function jsonText(body: SignedPiece): string {
  if (typeof body === 'string') return body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  const bom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  return utf8Text(bom ? body.subarray(3) : body);
}
