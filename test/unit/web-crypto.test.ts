import { beforeAll, describe, expect, it, vi } from 'vitest';
import { deliveredEvent, delivery, expectAccepted, SECRET, vectorCases, vectorSecrets } from './support.js';

/**
 * The path of runtimes without node:crypto (Cloudflare Workers, Vercel Edge): the core is loaded with
 * node:crypto hidden, so verification runs on Web Crypto, the hex decoder and comparison in plain JS.
 */
type Core = typeof import('../../src/index.js');
let core: Core;

beforeAll(async () => {
  const original = process.getBuiltinModule;
  vi.resetModules();
  process.getBuiltinModule = ((id: string) =>
    id === 'node:crypto' || id === 'crypto' ? undefined : original(id)) as typeof original;
  try {
    core = await import('../../src/index.js');
  } finally {
    process.getBuiltinModule = original;
    vi.resetModules();
  }
});

describe('without node:crypto (Web Crypto)', () => {
  it('the synchronous API says to use the async one', () => {
    expect(() =>
      core.verifySignature({ payload: '{}', header: 't=1,v1=00', secrets: SECRET, now: 1 }),
    ).not.toThrow();
    const header = `t=1,v1=${'ab'.repeat(32)}`;
    expect(() => core.verifySignature({ payload: '{}', header, secrets: SECRET, now: 1 })).toThrow(/async/);
  });

  it('every shared vector gives the same result through verifySignatureAsync', async () => {
    for (const c of vectorCases) {
      const secrets = vectorSecrets(c);
      for (const payload of [c.payload, new TextEncoder().encode(c.payload)]) {
        const result = await core.verifySignatureAsync({
          payload,
          header: c.header,
          secrets,
          toleranceSeconds: c.tolerance,
          now: c.now,
        });
        expect([c.name, result.ok, result.ok ? undefined : result.reason]).toEqual([
          c.name,
          c.expect.valid,
          c.expect.reason,
        ]);
      }
    }
  });

  it('signPayloadAsync matches node:crypto byte for byte, and the receiver processes events', async () => {
    const { signPayload } = await import('../../src/index.js');
    const payload = JSON.stringify(deliveredEvent());
    expect(await core.signPayloadAsync({ payload, secret: SECRET, timestamp: 1_795_000_000 })).toBe(
      signPayload({ payload, secret: SECRET, timestamp: 1_795_000_000 }),
    );
    const receiver = core.createReceiver({ secrets: SECRET });
    let calls = 0;
    receiver.on('message.delivered', () => {
      calls++;
    });
    const { id: _id, ...withoutId } = deliveredEvent();
    expectAccepted(await receiver.receive(delivery(withoutId)), 200);
    expectAccepted(await receiver.receive(delivery(withoutId)), 200, true);
    expect(calls).toBe(1);
  });
});
