import * as z from 'zod/mini';
import type * as core from 'zod/v4/core';
import { $ZodObjectJIT, config, safeParse } from 'zod/v4/core';
import { en } from 'zod/v4/locales';

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

/**
 * The envelope every event shares, made on the first parse: a receiver's creation and the package's import
 * build no schema, so a cold start (a serverless function's first answer) does not wait on zod.
 */
const envelopeShape = once(() => ({
  id: z.optional(z.string().check(z.startsWith('evt_'))),
  created_at: z.optional(z.iso.datetime({ offset: true })),
  // Its syntax is the signature profile's to check (a body-signature profile reads it before this schema runs).
  signature: z.optional(z.string()),
}));

/**
 * An object schema that keeps the fields it does not declare, compiled by zod into one function where the
 * runtime allows it (Node, Bun, Deno; in Workers zod checks it field by field): classic zod compiles its
 * objects, zod/mini's never do. Built on zod's core, as both flavours' objects are.
 */
function looseCompiled(
  def: Omit<core.$ZodObjectDef, 'catchall'> & { catchall?: core.$ZodType },
): core.$ZodType {
  return new $ZodObjectJIT({ ...def, catchall: def.catchall ?? z.unknown() });
}

const unknownEvent = once(() =>
  looseCompiled({
    type: 'object',
    shape: { ...envelopeShape(), type: z.string().check(z.minLength(1)), data: z.unknown() },
  }),
);

function once<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => {
    made ??= make();
    return made;
  };
}

/**
 * zod compiles an object schema on its first parse (a function made with `new Function`), a cost only many
 * parses repay: a schema is parsed field by field until it has parsed this many events, so a process that
 * answers a few deliveries (a cold start, a quiet endpoint) never pays for the compilation.
 */
const COMPILE_AFTER = 64;
const FIELD_BY_FIELD = { jitless: true } as const;

interface Parsing {
  readonly schema: core.$ZodType;
  readonly known: boolean;
  parses: number;
}

export type ParsedEvent =
  | { ok: true; event: { type: string; id?: string; data: unknown }; known: boolean }
  | { ok: false; issues: EventIssue[] };
export interface EventIssue {
  /** Dotted path of the field, `''` for the body itself. Never the value. */
  path: string;
  code: string;
  message: string;
}

/**
 * An event's data schema as the parser runs it: an object schema of either zod flavour keeps the fields it
 * does not declare (its own catchall, if it has one, stays) and is compiled; any other schema is used as it is.
 */
function tolerant(data: core.$ZodType): core.$ZodType {
  const def = data._zod.def as core.$ZodObjectDef;
  return def.type === 'object' ? looseCompiled(def) : data;
}

/**
 * zod/mini loads no locale, and an issue's message goes into the 422 answer: English is made the default, as
 * classic zod does when its first schema is built, unless the app chose a locale (`z.config(...)`) already.
 * A parse context with its own error map instead would slow every parse.
 */
function englishByDefault(): void {
  if (config().localeError === undefined) config(en());
}

/** Builds one schema per event type, on its first event; parsing picks it by the `type` field. */
export function createEventParser(catalogue: Catalogue): (value: unknown) => ParsedEvent {
  englishByDefault();
  const parsings = new Map<string, Parsing>();
  let unknown: Parsing | undefined;
  const parsingOf = (type: unknown): Parsing => {
    if (typeof type !== 'string' || !Object.hasOwn(catalogue, type)) {
      unknown ??= { schema: unknownEvent(), known: false, parses: 0 };
      return unknown;
    }
    let parsing = parsings.get(type);
    if (parsing === undefined) {
      const data = tolerant(catalogue[type] as core.$ZodType);
      const shape = { ...envelopeShape(), type: z.literal(type), data };
      parsing = { schema: looseCompiled({ type: 'object', shape }), known: true, parses: 0 };
      parsings.set(type, parsing);
    }
    return parsing;
  };
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { ok: false, issues: [{ path: '', code: 'invalid_type', message: 'Expected a JSON object' }] };
    }
    const parsing = parsingOf((value as { type?: unknown }).type);
    const context = parsing.parses < COMPILE_AFTER ? FIELD_BY_FIELD : undefined;
    parsing.parses++;
    const result = safeParse(parsing.schema, value, context);
    if (result.success) {
      return {
        ok: true,
        event: result.data as { type: string; id?: string; data: unknown },
        known: parsing.known,
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
