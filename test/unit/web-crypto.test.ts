import { describe, expect, it } from 'vitest';
import { defaultCryptoProvider } from '../../src/extend.js';
import {
  bodySignature,
  createReceiver,
  createVerifier,
  nodeCryptoProvider,
  standardWebhooks,
  verifySignature,
  verifySignatureAsync,
  webCryptoProvider,
} from '../../src/index.js';
import { signRequest, signRequestAsync } from '../../src/signature/index.js';
import {
  deliveredEvent,
  delivery,
  expectAccepted,
  SECRET,
  vectorCases,
  vectorSecrets,
} from '../support/unit.js';

/**
 * The path of runtimes without node:crypto (Cloudflare Workers, Vercel Edge): the Web Crypto provider is
 * passed in, so the same process checks both providers against each other.
 */
const web = webCryptoProvider();
const WHSEC = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('Web Crypto provider', () => {
  it('node:crypto is the default here, chosen once', () => {
    expect(defaultCryptoProvider()).toBe(defaultCryptoProvider());
    expect(defaultCryptoProvider().name).toBe('node:crypto');
    expect(web).toMatchObject({ name: 'web-crypto', sync: false });
  });

  it('the synchronous one-shot API says to use the async one', () => {
    const header = `t=1,v1=${'ab'.repeat(32)}`;
    // Refused before any HMAC: the answer needs no crypto, so it comes synchronously.
    expect(
      verifySignature({ payload: '{}', header: 't=1,v1=00', secrets: SECRET, now: 1, crypto: web }),
    ).toEqual({
      ok: false,
      reason: 'signature_mismatch',
      timestamp: 1,
    });
    expect(() => verifySignature({ payload: '{}', header, secrets: SECRET, now: 1, crypto: web })).toThrow(
      /async/,
    );
    expect(() => signRequest({ payload: '{}', secret: SECRET, crypto: web })).toThrow(/signRequestAsync/);
  });

  it('every shared vector gives the same result through verifySignatureAsync', async () => {
    for (const c of vectorCases) {
      const secrets = vectorSecrets(c);
      for (const payload of [c.payload, new TextEncoder().encode(c.payload)]) {
        const options = { payload, header: c.header, secrets, toleranceSeconds: c.tolerance, now: c.now };
        const result = await verifySignatureAsync({ ...options, crypto: web });
        expect([c.name, result]).toEqual([c.name, verifySignature(options)]);
      }
    }
  });

  it('signs byte for byte like node:crypto under every preset, and a verifier returns promises', async () => {
    const node = nodeCryptoProvider();
    if (!node) throw new Error('node:crypto expected under Node');
    const payload = JSON.stringify(deliveredEvent());
    const createdAt = Date.parse('2026-11-21T10:00:00+00:00') / 1000; // deliveredEvent's created_at
    const cases = [
      { secret: SECRET, profile: undefined, timestamp: 1_795_000_000 },
      { secret: WHSEC, profile: standardWebhooks, id: 'msg_1', timestamp: 1_795_000_000 },
      {
        secret: SECRET,
        profile: bodySignature({ hash: 'SHA-512', encoding: 'base64' }),
        timestamp: createdAt,
      },
    ];
    for (const { profile, ...rest } of cases) {
      const options = { payload, ...rest, ...(profile ? { profile } : {}) };
      const signed = await signRequestAsync({ ...options, crypto: web });
      expect(signed).toEqual(signRequest({ ...options, crypto: node }));
      const verifier = createVerifier({ secrets: rest.secret, profile, crypto: web });
      const pending = verifier.verify({ headers: signed.headers, body: signed.body }, rest.timestamp);
      expect(pending).toBeInstanceOf(Promise);
      expect(await pending).toMatchObject({ ok: true, mode: 'live', secretLabel: 'live[0]' });
    }
  });

  it('a receiver given the provider processes events and dedupes by the Web Crypto SHA-256', async () => {
    const receiver = createReceiver({ secrets: SECRET, crypto: web });
    let calls = 0;
    receiver.on('message.delivered', () => {
      calls++;
    });
    const { id: _id, ...withoutId } = deliveredEvent();
    expectAccepted(await receiver.receive(delivery(withoutId)), 200);
    expectAccepted(await receiver.receive(delivery(withoutId)), 200, true);
    expect(calls).toBe(1);
    expect(await web.sha256Hex('abc')).toBe(node().sha256Hex('abc'));
  });
});

function node() {
  const provider = nodeCryptoProvider();
  if (!provider) throw new Error('node:crypto expected under Node');
  return provider;
}
