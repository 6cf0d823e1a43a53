import * as z from 'zod/mini';
import { kindOf, WebhookConfigError } from './errors.js';

/**
 * What one option may be: a zod schema, and the same in words for the message of a mistake ("a whole number
 * from 1 to 1000"). Every option of the package is checked through one of these, at creation, so a typo fails
 * at startup with a message that names the option, what it must be and what it got.
 */
export interface OptionRule<T> {
  readonly schema: z.ZodMiniType<T>;
  readonly expected: string;
}

interface Bounds {
  min: number;
  max?: number;
  /** What the number counts, for the message: `milliseconds`, `seconds`. */
  unit?: string;
  /** Why the bound, for the message: `pg-boss's floor`. */
  why?: string;
}

function numberRule(kind: string, base: () => z.ZodMiniNumber<number>, bounds: Bounds): OptionRule<number> {
  const { min, max, unit, why } = bounds;
  const range = max === undefined ? `(${min} or more${why ? `: ${why}` : ''})` : `from ${min} to ${max}`;
  return lazyRule(`${kind}${unit ? ` of ${unit}` : ''} ${range}`, () =>
    base().check(...(max === undefined ? [z.gte(min)] : [z.gte(min), z.lte(max)])),
  );
}

/**
 * A rule whose schema is made the first time a value is checked against it: most options are left out, and a
 * zod schema made at import or at creation for nothing slows every cold start (a serverless function's first
 * answer waits on it).
 */
function lazyRule<T>(expected: string, make: () => z.ZodMiniType<T>): OptionRule<T> {
  let schema: z.ZodMiniType<T> | undefined;
  return {
    expected,
    get schema() {
      schema ??= make();
      return schema;
    },
  };
}

export const rules = {
  /**
   * A whole number within bounds: a count, milliseconds or seconds. Infinity, NaN, fractions (`concurrency:
   * 1.5`) and numbers past 2^53 are refused, so a typo never bends a limit.
   */
  whole: (bounds: Bounds): OptionRule<number> => numberRule('a whole number', z.int, bounds),
  /** A finite number within bounds, fractions allowed. */
  number: (bounds: Bounds): OptionRule<number> => numberRule('a number', z.number, bounds),
  /** A share of something: a number from 0 to 1. */
  fraction: lazyRule('a fraction from 0 to 1', () => z.number().check(z.gte(0), z.lte(1))),
  boolean: lazyRule('true or false', z.boolean),
  string: lazyRule('a string', z.string),
  /** One of a few strings. */
  oneOf: <const T extends readonly [string, ...string[]]>(values: T): OptionRule<T[number]> =>
    lazyRule(
      values.map((value) => `'${value}'`).join(' or '),
      () => z.enum(values) as unknown as z.ZodMiniType<T[number]>,
    ),
  /** Anything `test` accepts, described as `expected`. */
  that: <T>(expected: string, test: (value: unknown) => boolean): OptionRule<T> =>
    lazyRule(expected, () => z.unknown().check(z.refine(test)) as unknown as z.ZodMiniType<T>),
} as const;

/** What was given, for a message: a string quoted, a number as it is, an object by its kind (never its content). */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : `a list of ${value.length}`;
  if (typeof value === 'object' && value !== null) return kindOf(value);
  return String(value);
}

/** The message for `value` when `rule` refuses it, else undefined. `name` as the message names it. */
export function optionMistake<T>(name: string, value: unknown, rule: OptionRule<T>): string | undefined {
  return rule.schema.safeParse(value).success
    ? undefined
    : `${name} must be ${rule.expected}, got ${shown(value)}.`;
}

/**
 * `value` checked by `rule`, or `fallback` when it is undefined. A refused value throws a WebhookConfigError;
 * `where` goes before the message to name the call (`new MemoryDedupeStore({ maxEntries }): `).
 */
export function option<T>(
  name: string,
  value: T | undefined,
  fallback: T,
  rule: OptionRule<T>,
  where = '',
): T {
  if (value === undefined) return fallback;
  const mistake = optionMistake(name, value, rule);
  if (mistake) throw new WebhookConfigError(`${where}${mistake}`);
  return value;
}
