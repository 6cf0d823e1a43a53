import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../support/independent-signing.js';
import { DEEP, describeGarbledInput, validEvent } from './garbled-input.js';
import { ADAPTERS, startTarget, type Target } from './targets.js';

const bytes = (text: string) => new TextEncoder().encode(text);

for (const adapter of ADAPTERS) describeGarbledInput(adapter, () => startTarget(adapter));

describe('the same signed bytes get the same answer in every adapter', () => {
  const targets: Target[] = [];
  beforeAll(async () => {
    for (const adapter of ADAPTERS) targets.push(await startTarget(adapter));
  });
  afterAll(() => Promise.all(targets.map((target) => target.close())));

  it.each([
    ['a BOM before a valid event', () => `\uFEFF${validEvent()}`],
    ['a NUL byte before a valid event', () => `\u0000${validEvent()}`],
    ['duplicate keys', () => validEvent().replace('{', '{"type":"message.failed",')],
    ['deep nesting', () => DEEP],
  ])('%s', async (_name, make) => {
    const payload = bytes(make());
    const header = sign(payload);
    const answers = await Promise.all(
      targets.map(async (target) => {
        const response = await fetch(target.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'webhook-signature': header },
          body: payload,
        });
        const reason = ((await response.json()) as { error?: { code: string } }).error?.code ?? '';
        return `${response.status} ${reason}`;
      }),
    );
    expect(new Set(answers).size, answers.join(' | ')).toBe(1);
    expect(Number(answers[0]?.slice(0, 3))).toBeLessThan(500);
  });
});
