import { type SignedPiece, utf8Text } from '../base/bytes.js';
import type { EventIssue, ParsedEvent } from '../events/catalogue.js';
import type { Delivery } from './delivery.js';

export type ParseFailure = { reason: 'invalid_json' } | { reason: 'invalid_event'; issues: EventIssue[] };

const INVALID_JSON: ParseFailure = { reason: 'invalid_json' };

/**
 * JSON, then the event's schema. A UTF-8 byte order mark before the JSON text is ignored (RFC 8259 lets a
 * parser do so), the same whatever the body's form: Node's Buffer decoding keeps the mark and TextDecoder drops
 * it, so without one rule the same signed bytes would get different answers in different runtimes.
 */
export function parseDelivery(
  delivery: Delivery,
  parseEvent: (value: unknown) => ParsedEvent,
): ParseFailure | undefined {
  let json: unknown;
  try {
    json = JSON.parse(jsonText(delivery.body as SignedPiece));
  } catch {
    return INVALID_JSON;
  }
  const parsed = parseEvent(json);
  if (!parsed.ok) return { reason: 'invalid_event', issues: parsed.issues };
  delivery.event = parsed.event;
  return undefined;
}

function jsonText(body: SignedPiece): string {
  if (typeof body === 'string') return body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  const bom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  return utf8Text(bom ? body.subarray(3) : body);
}
