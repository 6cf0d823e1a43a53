import * as z from 'zod/mini';
import type * as core from 'zod/v4/core';

/**
 * The event catalogue: event type → schema of its `data`. Extend it with your own zod 4 schemas, from `zod`
 * or `zod/mini`, and the handlers of those types are typed too:
 *   createReceiver({ secrets, events: { ...defaultEvents, 'campaign.completed': z.object({ … }) } })
 * Extra fields the service adds are kept at runtime (the API is a preview); types show the declared ones,
 * so a misspelled field is a compile error. The package's own schemas are zod/mini's, which a bundler keeps
 * small: an app that never imports `zod` ships none of its methods.
 */
export type Catalogue = Readonly<Record<string, core.$ZodType>>;

const messageId = z.string().check(z.startsWith('msg_'));

export const messageDelivered = z.object({
  message_id: messageId,
  to: z
    .string()
    .check(z.regex(/^\+[0-9]+$/, 'Expected a phone number in international format: + then digits')),
  operator: z.string().check(z.minLength(1)),
});

/** Provisional: the service says failures surface in webhooks but not under which name or fields. */
export const messageFailed = z.looseObject({
  message_id: z.optional(messageId),
  to: z.optional(z.string()),
});

export const defaultEvents = {
  'message.delivered': messageDelivered,
  'message.failed': messageFailed,
} as const satisfies Catalogue;
export type DefaultEvents = typeof defaultEvents;

/** The envelope every event shares. `id`, `created_at` and `signature` may be absent (open in the preview API). */
export interface EventEnvelope<T extends string, D> {
  id?: string;
  type: T;
  /** ISO 8601 with a UTC offset. */
  created_at?: string;
  signature?: string;
  data: D;
}

export type EventType<C extends Catalogue> = keyof C & string;
export type CatalogueEvent<C extends Catalogue, K extends EventType<C>> = EventEnvelope<K, core.output<C[K]>>;
export type KnownEvent<C extends Catalogue> = { [K in EventType<C>]: CatalogueEvent<C, K> }[EventType<C>];
/** A verified event whose type is not in the catalogue: acknowledged and given to onAny, data not checked. */
export type UnknownEvent = EventEnvelope<string, unknown>;

export type ParsedEvent =
  | { ok: true; event: { type: string; id?: string; data: unknown }; known: boolean }
  | { ok: false; issues: EventIssue[] };
export interface EventIssue {
  /** Dotted path of the field, `''` for the body itself. Never the value. */
  path: string;
  code: string;
  message: string;
}
