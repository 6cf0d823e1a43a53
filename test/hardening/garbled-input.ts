import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent } from '../../src/testing.js';
import { sign, validlySigned } from '../support/independent-signing.js';
import type { StartTarget, Target } from './targets.js';

/*
 * Random and garbled requests, at least 2,000 per adapter, against the real servers: no 5xx, no crash, no
 * 2xx for a body whose signature the independent HMAC does not accept, no prototype pollution. The seed is
 * in the failure message (fast-check's, and ours): HARDENING_SEED=<seed> replays a run.
 */
const RUNS = 2000;
const seed = Number(process.env.HARDENING_SEED ?? Date.now() % 2 ** 31);
const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);
const now = () => Math.floor(Date.now() / 1000);

export const validEvent = () => JSON.stringify(createEvent('message.delivered'));
export const DEEP = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;

/** Bodies that have broken JSON parsers, validators and object-building code before. */
const specialBody = fc
  .oneof(
    fc.constantFrom(
      'null',
      '[]',
      '[1,2,3]',
      '"message.delivered"',
      '1e400',
      '-123456789012345678901234567890.5e-400',
      '{"type":"message.delivered","id":"evt_dup","type":"message.failed"}',
      '{"__proto__":{"polluted":"yes"},"type":"message.delivered","id":"evt_proto"}',
      '{"constructor":{"prototype":{"polluted":"yes"}},"type":"message.delivered","id":"evt_ctor"}',
      '{"type":"message.delivered","data":{"__proto__":{"polluted":"yes"}}}',
      '{"type":"message.delivered","id":"evt_\\u0000nul"}',
      '',
    ),
    fc.constant(null).map(() => `\uFEFF${validEvent()}`),
    fc.constant(null).map(validEvent),
    fc.constant(null).map(() => validEvent().replace('"', '\u0000"')),
  )
  .map(bytes);
const invalidUtf8 = fc
  .constantFrom([0xff, 0xfe], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80])
  .chain((bad) =>
    fc.constant(null).map(() => {
      const event = bytes(validEvent());
      const at = 10;
      return Uint8Array.from([...event.subarray(0, at), ...bad, ...event.subarray(at)]);
    }),
  );
const body = fc.oneof(
  { weight: 40, arbitrary: specialBody },
  {
    weight: 30,
    arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value) => bytes(JSON.stringify(value) ?? 'null')),
  },
  { weight: 20, arbitrary: fc.uint8Array({ maxLength: 512 }) },
  { weight: 10, arbitrary: invalidUtf8 },
  // 200 KB each: rare, so the run stays short.
  { weight: 1, arbitrary: fc.constant(bytes(DEEP)) },
);

/** Garbled t=/v1= fragments: pieces of a real header shuffled, repeated and cut. */
const fragment = fc.oneof(
  fc.constantFrom('t=', 'v1=', 'v0=', ',', '=', ' ', ',,', 't', 'v1'),
  fc.integer({ min: -1, max: 2 ** 53 }).map(String),
  fc.stringMatching(/^[0-9a-f]{0,70}$/),
  fc.string({ maxLength: 8 }),
);
const garbledHeader = fc.array(fragment, { maxLength: 12 }).map((parts) => parts.join(''));

type Signing =
  | { kind: 'valid' }
  | { kind: 'stale' }
  | { kind: 'garbled'; header: string }
  | { kind: 'missing' };
const signing: fc.Arbitrary<Signing> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'valid' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'stale' as const }) },
  { weight: 3, arbitrary: garbledHeader.map((header) => ({ kind: 'garbled' as const, header })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'missing' as const }) },
);

function signatureFor(payload: Uint8Array, how: Signing): string | undefined {
  switch (how.kind) {
    case 'valid':
      return sign(payload);
    case 'stale':
      return sign(payload, now() - 3600);
    case 'garbled':
      // fetch refuses header values with control characters; those never reach a server from a client.
      return how.header.replace(/[^\x20-\x7e]/g, '');
    case 'missing':
      return undefined;
  }
}

/**
 * Random and garbled requests against one target: no 5xx, no 2xx without a valid signature, no prototype
 * pollution, and still serving at the end.
 */
export function describeGarbledInput(name: string, start: StartTarget): void {
  describe(`garbled input through ${name}`, () => {
    let target: Target;
    beforeAll(async () => {
      target = await start();
    });
    afterAll(() => target.close());

    it(`${RUNS} random requests: no 5xx, no 2xx without a valid signature (seed ${seed})`, async () => {
      await fc.assert(
        fc.asyncProperty(body, signing, async (payload, how) => {
          const header = signatureFor(payload, how);
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (header !== undefined) headers['webhook-signature'] = header;
          const response = await fetch(target.url, { method: 'POST', headers, body: payload });
          const text = await response.text();
          expect(response.status, text).toBeLessThan(500);
          if (response.status < 300) expect(validlySigned(payload, header)).toBe(true);
          expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
        }),
        { numRuns: RUNS, seed },
      );
      // Still serving: nothing crashed.
      const event = validEvent();
      const answer = await fetch(target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'webhook-signature': sign(event) },
        body: event,
      });
      expect(answer.status).toBe(200);
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    });
  });
}
