import type { z } from 'zod';
import type { DefaultEvents } from './catalogue.js';

/** Crockford base32, as in ULIDs: the service's ids are a prefix and 26 of these. */
const ULID_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A random id in the service's style: prefix + 26 characters (`evt_01J…`). */
export function createId(prefix: 'evt_' | 'msg_' | 'req_' | (string & {})): string {
  let out = prefix;
  for (const byte of crypto.getRandomValues(new Uint8Array(26))) out += ULID_ALPHABET[byte & 31];
  return out;
}

/** A phone number in international format from a range reserved for fiction (+1 555 01xx…). */
export function createPhoneNumber(): string {
  const [a = 0, b = 0] = crypto.getRandomValues(new Uint16Array(2));
  return `+1555${String(a % 1000).padStart(3, '0')}${String(b % 10000).padStart(4, '0')}`;
}

/** Now, as the service writes timestamps: ISO 8601 with an explicit UTC offset. */
export function isoTimestamp(date: Date = new Date()): string {
  return date.toISOString().replace('Z', '+00:00');
}

type DataOf<K extends keyof DefaultEvents> = z.output<DefaultEvents[K]>;

const defaultData: { [K in keyof DefaultEvents]: () => DataOf<K> } = {
  'message.delivered': () => ({ message_id: createId('msg_'), to: createPhoneNumber(), operator: 'op_test' }),
  'message.failed': () => ({ message_id: createId('msg_'), to: createPhoneNumber(), reason: 'unreachable' }),
};

export interface TestEvent<T extends string = string, D = unknown> {
  id: string;
  type: T;
  created_at: string;
  data: D;
}

export interface EventOverrides<D> {
  id?: string;
  /** ISO 8601 with an offset; a Date is converted. */
  created_at?: string | Date;
  data?: D;
}

/**
 * A valid event with a fresh `evt_` id and timestamp. Catalogue types get valid default data, which
 * `partial.data` is merged into; any other type (your own catalogue entries) needs its `data` given.
 */
export function createEvent<K extends keyof DefaultEvents>(
  type: K,
  partial?: EventOverrides<Partial<DataOf<K>>>,
): TestEvent<K, DataOf<K>>;
export function createEvent<T extends string, D>(
  type: T,
  partial: EventOverrides<D> & { data: D },
): TestEvent<T, D>;
export function createEvent(type: string, partial: EventOverrides<unknown> = {}): TestEvent {
  const defaults = Object.hasOwn(defaultData, type) ? defaultData[type as keyof DefaultEvents]() : undefined;
  const { created_at } = partial;
  return {
    id: partial.id ?? createId('evt_'),
    type,
    created_at: created_at instanceof Date ? isoTimestamp(created_at) : (created_at ?? isoTimestamp()),
    data: defaults ? { ...defaults, ...(partial.data as object | undefined) } : partial.data,
  };
}
