import { randomId } from './crypto-backend.js';
import type { DefaultEvents } from './events.js';
import { DEFAULT_SIGNATURE_HEADER } from './options.js';
import type { Secret } from './secrets.js';
import { nowSeconds, type SignatureScheme, signPayload } from './signature.js';

export { signPayload, signPayloadAsync } from './signature.js';

const ULID_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** An id in the service's style: prefix + 26 characters. */
export function createId(prefix: 'evt_' | 'msg_' | 'req_' | string): string {
  const random = randomId();
  let out = prefix;
  for (let i = 0; i < 26; i++) out += ULID_ALPHABET[Number.parseInt(random[i] ?? '0', 16) * 2 + (i & 1)];
  return out;
}

type DataOf<K extends keyof DefaultEvents> = import('zod').output<DefaultEvents[K]>;

const defaultData: { [K in keyof DefaultEvents]: () => DataOf<K> } = {
  'message.delivered': () => ({ message_id: createId('msg_'), to: '+15551234567', operator: 'op_test' }),
  'message.failed': () => ({ message_id: createId('msg_'), to: '+15551234567', reason: 'unreachable' }),
};

export interface TestEvent<T extends string = string, D = unknown> {
  id: string;
  type: T;
  created_at: string;
  data: D;
}

/** A valid event of the catalogue with fresh ids and timestamp; `partial` overrides fields (data is merged). */
export function createEvent<K extends keyof DefaultEvents>(
  type: K,
  partial: { id?: string; created_at?: string; data?: Partial<DataOf<K>> } = {},
): TestEvent<K, DataOf<K>> {
  return {
    id: partial.id ?? createId('evt_'),
    type,
    created_at: partial.created_at ?? new Date().toISOString().replace('Z', '+00:00'),
    data: { ...defaultData[type](), ...partial.data } as DataOf<K>,
  };
}

export interface SignedRequestOptions {
  secret: Secret;
  /** Unix seconds; default now. */
  timestamp?: number;
  url?: string;
  signatureHeader?: string;
  scheme?: SignatureScheme;
}

export interface SignedRequest {
  /** The exact bytes that were signed. */
  body: string;
  headers: Record<string, string>;
  /** The same delivery as a Web Request (POST to `url`, default http://localhost/webhooks). */
  request: Request;
}

/** Serializes the event once, signs exactly those bytes, and returns them with the headers. */
export function createSignedRequest(event: unknown, options: SignedRequestOptions): SignedRequest {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  const timestamp = options.timestamp ?? nowSeconds();
  const signature = signPayload({
    payload: body,
    secret: options.secret,
    timestamp,
    ...(options.scheme ? { scheme: options.scheme } : {}),
  });
  const headers = {
    'content-type': 'application/json',
    [options.signatureHeader ?? DEFAULT_SIGNATURE_HEADER]: signature,
  };
  const request = new Request(options.url ?? 'http://localhost/webhooks', { method: 'POST', headers, body });
  return { body, headers, request };
}
