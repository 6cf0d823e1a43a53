import fc from 'fast-check';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import {
  createReceiver,
  createVerifier,
  RawBodyError,
  verifySignature,
  verifySignatureAsync,
  WebhookConfigError,
} from '../../src/index.js';
import { signPayload } from '../../src/signature/index.js';
import { deliveredEvent, delivery, nowSeconds, SECRET, TEST_SECRET } from '../support/unit.js';

const NOW = 1_795_000_000;
const stripeWebhooks = Stripe.webhooks;

describe('interop with stripe-node (an implementation nobody here wrote)', () => {
  it('headers from stripe generateTestHeaderString verify with verifySignature', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 1024 }),
        fc.integer({ min: 0, max: 300 }),
        (payload, age) => {
          const timestamp = NOW - age;
          const header = stripeWebhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp });
          for (const body of [payload, Buffer.from(payload, 'utf8')]) {
            const result = verifySignature({ payload: body, header, secrets: SECRET, now: NOW });
            expect(result).toEqual({ ok: true, timestamp, mode: 'live', secretLabel: 'live[0]' });
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('headers from signPayload pass stripe constructEvent', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const payload = JSON.stringify({ id: 'evt_x', value });
        const header = signPayload({ payload, secret: SECRET });
        const event = stripeWebhooks.constructEvent(Buffer.from(payload), header, SECRET);
        expect(event).toEqual(JSON.parse(payload));
      }),
      { numRuns: 150 },
    );
  });

  it('stripe rejects what we reject: a changed body signed by signPayload', () => {
    const payload = JSON.stringify(deliveredEvent());
    const header = signPayload({ payload, secret: SECRET });
    expect(() => stripeWebhooks.constructEvent(`${payload} `, header, SECRET)).toThrow(/No signatures found/);
  });
});

describe('payload that is not bytes', () => {
  it('a parsed object throws RawBodyError that says how to get the raw body (sync and async)', async () => {
    const parsed = deliveredEvent();
    const header = signPayload({ payload: JSON.stringify(parsed), secret: SECRET });
    // A JavaScript caller (or a cast) handing over req.body after express.json().
    const options = { payload: parsed as never, header, secrets: SECRET };
    const errors: unknown[] = [await verifySignatureAsync(options).catch((error: unknown) => error)];
    try {
      verifySignature(options);
    } catch (error) {
      errors.push(error);
    }
    expect(errors).toHaveLength(2);
    for (const error of errors) {
      expect(error).toBeInstanceOf(RawBodyError);
      const message = (error as Error).message;
      expect(message).toContain('a plain object (already-parsed JSON)');
      expect(message).toContain('express.raw');
      expect(message).toContain('bodyParser: false');
      expect(message).not.toContain(parsed.data.message_id);
    }
  });

  it('signPayload of an object says to sign the exact bytes that are sent', () => {
    expect(() => signPayload({ payload: { a: 1 } as never, secret: SECRET })).toThrow(/JSON\.stringify/);
  });
});

describe('secrets are checked when the receiver is created', () => {
  const cases: [string, unknown, RegExp][] = [
    ['undefined (unset variable)', undefined, /is the .*set|check that the variable is set/i],
    ['empty string', '', /empty string.*environment variable/],
    ['trailing newline', 'whsec_padded_value_123\n', /whitespace.*newline/],
    ['leading space', ' whsec_padded_value_123', /whitespace/],
    ['empty list', [], /holds no secret/],
    ['empty mode map', { live: [], test: [] }, /holds no secret/],
    ['both modes unset', { live: undefined, test: undefined }, /holds no secret/],
    ['a number', 12345, /string or a Uint8Array/],
    ['empty byte array', new Uint8Array(0), /empty byte array/],
  ];
  for (const [name, secrets, message] of cases) {
    it(`${name}: fails at createReceiver with a message naming the mistake`, () => {
      let thrown: unknown;
      try {
        createReceiver({ secrets: secrets as never });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(WebhookConfigError);
      expect((thrown as Error).message).toMatch(message);
      if (typeof secrets === 'string' && secrets.trim()) {
        expect((thrown as Error).message).not.toContain(secrets.trim());
      }
    });
  }

  it('takes a mode map with one mode unset (an unset variable), as the other mode alone', () => {
    const unset: string | undefined = undefined;
    const receiver = createReceiver({ secrets: { live: unset, test: 'whsec_test_only' } });
    expect(receiver).toBeDefined();
  });

  it('names which secret of a list is wrong, by position only', () => {
    expect(() =>
      createReceiver({ secrets: { live: ['whsec_ok_1'], test: ['whsec_ok_2', 'whsec_bad '] } }),
    ).toThrow(/Secret test\[1\] has leading or trailing whitespace/);
  });
});

describe('rotation, several v1 values and modes', () => {
  const payload = '{"id":"evt_rotation"}';

  it('any configured secret verifies (rotation), and the one that matched is reported by label', () => {
    const secrets = ['whsec_old_secret_0001', 'whsec_new_secret_0002'];
    for (const [index, secret] of secrets.entries()) {
      const header = signPayload({ payload, secret, timestamp: NOW });
      expect(verifySignature({ payload, header, secrets, now: NOW })).toEqual({
        ok: true,
        timestamp: NOW,
        mode: 'live',
        secretLabel: `live[${index}]`,
      });
    }
  });

  it('any of several v1 values may match, in any position, among unknown schemes', () => {
    const good = signPayload({ payload, secret: SECRET, timestamp: NOW }).split('v1=')[1] as string;
    const other = signPayload({ payload, secret: 'whsec_other', timestamp: NOW }).split('v1=')[1] as string;
    const headers = [
      `t=${NOW},v1=${other},v1=${good}`,
      `v1=${good}, t=${NOW}, v0=abc`,
      `t=${NOW},v1=zz,v1=${good.toUpperCase()}`,
      `t=${NOW},v1=${good.slice(2)},v1=${good}`,
    ];
    for (const header of headers) {
      expect(verifySignature({ payload, header, secrets: SECRET, now: NOW }).ok).toBe(true);
    }
    expect(verifySignature({ payload, header: `t=${NOW},v1=${other}`, secrets: SECRET, now: NOW })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
      timestamp: NOW,
    });
  });

  it('hex is read in either case, and only hex: a control character in place of a digit rejects', () => {
    const good = signPayload({ payload, secret: SECRET, timestamp: NOW }).split('v1=')[1] as string;
    const upper = good.toUpperCase();
    expect(verifySignature({ payload, header: `t=${NOW},v1=${upper}`, secrets: SECRET, now: NOW }).ok).toBe(
      true,
    );
    // 0x10–0x19 OR 0x20 is '0'–'9': a lowercasing trick applied to every character would let these pass.
    const digit = good.search(/[0-9]/);
    const control =
      good.slice(0, digit) + String.fromCharCode(good.charCodeAt(digit) ^ 0x20) + good.slice(digit + 1);
    const result = verifySignature({ payload, header: `t=${NOW},v1=${control}`, secrets: SECRET, now: NOW });
    expect(result).toEqual({ ok: false, reason: 'signature_mismatch', timestamp: NOW });
  });

  it('in a digit or a letter position, exactly that character (a letter in either case) matches', () => {
    const good = signPayload({ payload, secret: SECRET, timestamp: NOW }).split('v1=')[1] as string;
    for (const position of [good.search(/[0-9]/), good.search(/[a-f]/)]) {
      const own = good[position] as string;
      const accepted: string[] = [];
      for (const code of [...Array(0x300).keys(), 0x2030, 0xff10, 0xffff]) {
        const char = String.fromCharCode(code);
        const header = `t=${NOW},v1=${good.slice(0, position)}${char}${good.slice(position + 1)}`;
        if (verifySignature({ payload, header, secrets: SECRET, now: NOW }).ok) accepted.push(char);
      }
      expect(accepted.sort()).toEqual([...new Set([own.toUpperCase(), own])].sort());
    }
  });

  it('reports the mode of the secret that matched: { live: [...], test: [...] }', () => {
    const secrets = { live: ['whsec_live_a', 'whsec_live_b'], test: ['whsec_test_a', 'whsec_test_b'] };
    const verifier = createVerifier({ secrets });
    for (const mode of ['live', 'test'] as const) {
      for (const [index, secret] of secrets[mode].entries()) {
        const header = signPayload({ payload, secret, timestamp: NOW });
        expect(
          verifier.verify({ headers: { 'webhook-signature': header }, body: payload }, NOW),
        ).toMatchObject({
          ok: true,
          mode,
          secretLabel: `${mode}[${index}]`,
        });
      }
    }
  });

  it('byte secrets (raw key) work like their text', () => {
    const bytes = new TextEncoder().encode(SECRET);
    const header = signPayload({ payload, secret: SECRET, timestamp: NOW });
    expect(verifySignature({ payload, header, secrets: bytes, now: NOW }).ok).toBe(true);
  });

  it('the mode reaches the handler, the outcome, and the dedupe key (live and test do not collide)', async () => {
    const receiver = createReceiver({ secrets: { live: SECRET, test: TEST_SECRET } });
    const seen: string[] = [];
    receiver.on('message.delivered', (_event, ctx) => {
      seen.push(`${ctx.mode} ${ctx.dedupeKey}`);
    });
    const event = deliveredEvent();
    const test = await receiver.receive(delivery(event, { secret: TEST_SECRET }));
    const live = await receiver.receive(delivery(event, { secret: SECRET, timestamp: nowSeconds() }));
    expect([test.status, test.mode, test.duplicate]).toEqual([200, 'test', undefined]);
    expect([live.status, live.mode, live.duplicate]).toEqual([200, 'live', undefined]);
    expect(seen).toEqual([`test test:${event.id}`, `live live:${event.id}`]);
  });

  it('one-shot calls never reuse a stale verifier: alternating secrets, tolerances, a mutated list', () => {
    const a = 'whsec_alternating_a';
    const b = 'whsec_alternating_b';
    const header = signPayload({ payload, secret: a, timestamp: NOW });
    const verify = (secrets: string | string[], toleranceSeconds?: number, now = NOW) =>
      verifySignature({ payload, header, secrets, now, toleranceSeconds }).ok;
    expect([verify(a), verify(b), verify(a), verify(b)]).toEqual([true, false, true, false]);
    expect([verify(a, 10, NOW + 11), verify(a, undefined, NOW + 11), verify(a, 10, NOW + 11)]).toEqual([
      false,
      true,
      false,
    ]);
    const list = [b];
    expect(verify(list)).toBe(false);
    list.push(a);
    expect(verify(list)).toBe(true);
  });

  it('tolerance is settable separately for past and future', () => {
    const header = signPayload({ payload, secret: SECRET, timestamp: NOW });
    const verify = (now: number, toleranceSeconds: { past?: number; future?: number }) =>
      verifySignature({ payload, header, secrets: SECRET, now, toleranceSeconds });
    expect(verify(NOW + 600, { past: 600, future: 0 }).ok).toBe(true);
    expect(verify(NOW + 601, { past: 600, future: 0 })).toMatchObject({ reason: 'stale_timestamp' });
    expect(verify(NOW - 1, { past: 600, future: 0 })).toMatchObject({ reason: 'future_timestamp' });
    expect(verify(NOW - 300, { past: 0 }).ok).toBe(true);
    expect(() => verify(NOW, { past: -1 })).toThrow(WebhookConfigError);
  });
});
