import { z } from 'zod';

/**
 * The event catalogue: event type → schema of its `data`. Extend it with your own zod schemas and the
 * handlers of those types are typed too:
 *   createReceiver({ secrets, events: { ...defaultEvents, 'campaign.completed': z.object({ … }) } })
 * Extra fields the service adds are kept at runtime (the API is a preview); types show the declared ones,
 * so a misspelled field is a compile error.
 */
export type Catalogue = Readonly<Record<string, z.ZodType>>;

export const messageDelivered = z.object({
  message_id: z.string().startsWith('msg_'),
  to: z.string().regex(/^\+[0-9]+$/, 'Expected a phone number in international format: + then digits'),
  operator: z.string().min(1),
});

/** Provisional: the service says failures surface in webhooks but not under which name or fields. */
export const messageFailed = z.looseObject({
  message_id: z.string().startsWith('msg_').optional(),
  to: z.string().optional(),
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
export type CatalogueEvent<C extends Catalogue, K extends EventType<C>> = EventEnvelope<K, z.output<C[K]>>;
export type KnownEvent<C extends Catalogue> = { [K in EventType<C>]: CatalogueEvent<C, K> }[EventType<C>];
/** A verified event whose type is not in the catalogue: acknowledged and given to onAny, data not checked. */
export type UnknownEvent = EventEnvelope<string, unknown>;

const envelopeShape = {
  id: z.string().startsWith('evt_').optional(),
  created_at: z.iso.datetime({ offset: true }).optional(),
  // Its syntax is the signature profile's to check (a body-signature profile reads it before this schema runs).
  signature: z.string().optional(),
};

const unknownEvent = z.looseObject({ ...envelopeShape, type: z.string().min(1), data: z.unknown() });

export type ParsedEvent =
  | { ok: true; event: { type: string; id?: string; data: unknown }; known: boolean }
  | { ok: false; issues: EventIssue[] };
export interface EventIssue {
  /** Dotted path of the field, `''` for the body itself. Never the value. */
  path: string;
  code: string;
  message: string;
}

/** Compiles one schema per event type, once; parsing picks it by the `type` field. */
export function createEventParser(catalogue: Catalogue): (value: unknown) => ParsedEvent {
  const schemas = new Map<string, z.ZodType>();
  for (const [type, data] of Object.entries(catalogue)) {
    const tolerant = data instanceof z.ZodObject && data.def.catchall === undefined ? data.loose() : data;
    schemas.set(type, z.looseObject({ ...envelopeShape, type: z.literal(type), data: tolerant }));
  }
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { ok: false, issues: [{ path: '', code: 'invalid_type', message: 'Expected a JSON object' }] };
    }
    const type = (value as { type?: unknown }).type;
    const schema = (typeof type === 'string' && schemas.get(type)) || unknownEvent;
    const result = schema.safeParse(value);
    if (result.success) {
      return {
        ok: true,
        event: result.data as { type: string; id?: string; data: unknown },
        known: schema !== unknownEvent,
      };
    }
    return {
      ok: false,
      issues: result.error.issues.map((issue) => ({
        path: issue.path.join('.'),
        code: issue.code,
        message: issue.message,
      })),
    };
  };
}
