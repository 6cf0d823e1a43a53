import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { verifySignature, verifySignatureAsync } from '../../src/index.js';

interface VectorCase {
  name: string;
  payload: string;
  header: string;
  secrets?: string[];
  secrets_hex?: string[];
  tolerance: number;
  now: number;
  expect: { valid: boolean; reason?: string };
}

const vectors = JSON.parse(readFileSync(new URL('../fixtures/signatures.json', import.meta.url), 'utf8')) as {
  cases: VectorCase[];
};

const secretsOf = (c: VectorCase) =>
  c.secrets ?? (c.secrets_hex ?? []).map((hex) => new Uint8Array(Buffer.from(hex, 'hex')));

describe('shared signature vectors (independent signer)', () => {
  it('has cases', () => {
    expect(vectors.cases.length).toBeGreaterThanOrEqual(31);
  });

  for (const c of vectors.cases) {
    it(c.name, async () => {
      for (const payload of [c.payload, new TextEncoder().encode(c.payload)]) {
        const options = {
          payload,
          header: c.header,
          secrets: secretsOf(c),
          toleranceSeconds: c.tolerance,
          now: c.now,
        };
        const result = verifySignature(options);
        expect(result.ok).toBe(c.expect.valid);
        if (!result.ok) expect(result.reason).toBe(c.expect.reason);
        expect(await verifySignatureAsync(options)).toEqual(result);
      }
    });
  }
});
