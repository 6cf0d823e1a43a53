import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
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

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ])('a %s body signed over its JSON: 415 unsupported_encoding', async (encoding, compress) => {
    const json = validEvent();
    const headers = {
      'content-type': 'application/json',
      'content-encoding': encoding,
      'webhook-signature': sign(bytes(json)),
    };
    const body = new Uint8Array(compress(Buffer.from(json)));
    const answers = await Promise.all(
      targets.map(async (target) => {
        const response = await fetch(target.url, { method: 'POST', headers, body });
        const reason = ((await response.json()) as { error?: { code: string } }).error?.code ?? '';
        return `${response.status} ${reason}`;
      }),
    );
    expect(answers).toEqual(targets.map(() => '415 unsupported_encoding'));
  });
});
