import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/index.js';
import { signPayload } from '../../src/signature/index.js';
import { isDigits, scanTimestamped } from '../../src/signature/reading.js';

/** The `t=…,v1=…` syntax's scan, judged by its rule: one timestamp of digits only and at least one signature. */
function parseSignatureHeader(header: string | null | undefined) {
  const scan = scanTimestamped(header);
  if (!scan.present) return { ok: false as const, reason: 'missing_signature' };
  const { timestampText, signatures } = scan;
  if (scan.timestamps !== 1 || !isDigits(timestampText) || signatures.length === 0) {
    return { ok: false as const, reason: 'malformed_signature' };
  }
  return { ok: true as const, timestamp: Number(timestampText), timestampText, signatures };
}

const NOW = 1_795_000_000;
const REASONS = ['missing_signature', 'malformed_signature'];

/** Secrets as the service could issue them: non-empty, no surrounding whitespace (the receiver rejects those). */
const secret = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 64 })
  .filter((value) => value.trim() === value && value.length > 0);

/** Pieces a header is made of, glued with the separators the parser splits on. */
const fragment = fc.oneof(
  fc.constantFrom('t=', 'v1=', 'v0=', 't', 'v1', '=', ',', ' ', '\t', '\n', ',,', '=='),
  fc.nat().map((n) => `t=${n}`),
  fc.integer().map((n) => `t=${n}`),
  fc.double().map((n) => `t=${n}`),
  fc.stringMatching(/^[0-9a-fA-F]{0,70}$/).map((hex) => `v1=${hex}`),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
);
/** Headers of the right form (with stray whitespace), so that the ok path is always part of the mix. */
const wellFormedHeader = fc
  .tuple(fc.nat(), fc.stringMatching(/^[0-9a-fA-F]{64}$/), fc.constantFrom('', ' ', '\t'))
  .map(([t, hex, pad]) => `${pad}t=${t}${pad},${pad}v1=${hex}${pad}`);

const structuredHeader = fc
  .array(fragment, { maxLength: 12 })
  .chain((parts) =>
    fc
      .array(fc.constantFrom(',', '', ' , ', '='), { minLength: parts.length, maxLength: parts.length })
      .map((seps) => parts.map((p, i) => p + seps[i]).join('')),
  );

/** The header rules written the plain way (split, trim, regex): the index-scanning parser must agree. */
function referenceParse(header: string) {
  if (header.trim() === '') return { ok: false, reason: 'missing_signature' };
  const ts: string[] = [];
  const signatures: string[] = [];
  for (const raw of header.split(',')) {
    const item = raw.trim();
    const eq = item.indexOf('=');
    if (eq === -1) continue;
    if (item.slice(0, eq) === 't') ts.push(item.slice(eq + 1));
    if (item.slice(0, eq) === 'v1') signatures.push(item.slice(eq + 1));
  }
  if (ts.length !== 1 || !/^[0-9]+$/.test(ts[0] as string) || signatures.length === 0) {
    return { ok: false, reason: 'malformed_signature' };
  }
  return { ok: true, timestamp: Number(ts[0]), timestampText: ts[0], signatures };
}

function checkParse(header: string) {
  const parsed = parseSignatureHeader(header);
  expect(parsed).toEqual(referenceParse(header));
  if (parsed.ok) {
    expect(parsed.timestampText).toMatch(/^[0-9]+$/);
    expect(parsed.timestamp).toBe(Number(parsed.timestampText));
    expect(parsed.signatures.length).toBeGreaterThan(0);
  } else {
    expect(REASONS).toContain(parsed.reason);
  }
}

describe('the t=…,v1=… syntax on any input', () => {
  it('never throws on any string; returns ok or a reason', () => {
    fc.assert(fc.property(fc.string(), checkParse), { numRuns: 500 });
  });

  it('never throws on any full-Unicode string', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), checkParse), { numRuns: 500 });
  });

  it('never throws on headers built from t=/v1= fragments; and verify answers a reason too', () => {
    let parsedOk = 0;
    fc.assert(
      fc.property(fc.oneof(structuredHeader, wellFormedHeader), (header) => {
        checkParse(header);
        if (parseSignatureHeader(header).ok) parsedOk++;
        // The verifier answers what the parser read: its reason when the header is refused, else a check
        // further down the order (at this clock the timestamp or the HMAC) for the timestamp it parsed.
        const parsed = parseSignatureHeader(header);
        const result = verifySignature({ payload: '{}', header, secrets: 'whsec_x', now: NOW });
        if (!parsed.ok) expect(result).toEqual({ ok: false, reason: parsed.reason });
        else expect(result).toMatchObject({ ok: false, timestamp: parsed.timestamp });
      }),
      { numRuns: 1000 },
    );
    // The generator reaches well-formed headers too, not only garbage.
    expect(parsedOk).toBeGreaterThan(20);
  });

  it('whitespace-only, null and undefined headers are missing_signature', () => {
    for (const header of [undefined, null, '', '   ', '\t\n']) {
      expect(parseSignatureHeader(header)).toEqual({ ok: false, reason: 'missing_signature' });
    }
  });
});

describe('sign → verify', () => {
  it('round-trips for arbitrary byte payloads and secrets', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 2048 }),
        secret,
        fc.integer({ min: 0, max: 300 }),
        (payload, key, age) => {
          const header = signPayload({ payload, secret: key, timestamp: NOW - age });
          expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
          const result = verifySignature({ payload, header, secrets: key, now: NOW });
          expect(result).toEqual({ ok: true, timestamp: NOW - age, mode: 'live', secretLabel: 'live[0]' });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('round-trips for string payloads as their UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), secret, (text, key) => {
        const header = signPayload({ payload: text, secret: key, timestamp: NOW });
        const bytes = new TextEncoder().encode(text);
        expect(verifySignature({ payload: bytes, header, secrets: key, now: NOW }).ok).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('rejects any single-byte change of the body', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 512 }),
        secret,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (payload, key, at, flip) => {
          const header = signPayload({ payload, secret: key, timestamp: NOW });
          const changed = payload.slice();
          const index = at % changed.length;
          changed[index] = (changed[index] as number) ^ flip;
          const result = verifySignature({ payload: changed, header, secrets: key, now: NOW });
          expect(result).toEqual({ ok: false, reason: 'signature_mismatch', timestamp: NOW });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rejects any single hex-digit change of the signature', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 256 }),
        secret,
        fc.integer({ min: 0, max: 63 }),
        fc.integer({ min: 1, max: 15 }),
        (payload, key, at, delta) => {
          const header = signPayload({ payload, secret: key, timestamp: NOW });
          const hex = header.slice(header.indexOf('v1=') + 3);
          const digit = (Number.parseInt(hex[at] as string, 16) + delta) % 16;
          const changed = `t=${NOW},v1=${hex.slice(0, at)}${digit.toString(16)}${hex.slice(at + 1)}`;
          const result = verifySignature({ payload, header: changed, secrets: key, now: NOW });
          expect(result).toEqual({ ok: false, reason: 'signature_mismatch', timestamp: NOW });
        },
      ),
      { numRuns: 300 },
    );
  });
});
