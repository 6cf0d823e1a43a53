import { describe, expect, it } from 'vitest';
import { verifySignature, verifySignatureAsync } from '../../src/index.js';
import { vectorCases, vectorSecrets } from '../support/unit.js';

describe('shared signature vectors (independent signer)', () => {
  it('has cases', () => {
    expect(vectorCases.length).toBeGreaterThanOrEqual(31);
  });

  for (const c of vectorCases) {
    it(c.name, async () => {
      for (const payload of [c.payload, new TextEncoder().encode(c.payload)]) {
        const options = {
          payload,
          header: c.header,
          secrets: vectorSecrets(c),
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
