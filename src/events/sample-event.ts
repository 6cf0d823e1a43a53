import type { z } from 'zod';
import type { DefaultEvents } from './catalogue.js';
import { createId, createPhoneNumber, isoTimestamp } from './ids.js';

/** The `data` of a catalogue event type, as its schema outputs it. */
export type DataOf<K extends keyof DefaultEvents> = z.output<DefaultEvents[K]>;

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
