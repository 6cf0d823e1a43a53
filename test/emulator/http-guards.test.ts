import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { rawExchange } from '../support/raw-http.js';

let emulator: Emulator;
let port: number;

beforeAll(async () => {
  emulator = await startEmulator();
  port = Number(new URL(emulator.url).port);
});

afterAll(() => emulator.close());

function request(method: string, path: string, headers: Record<string, string>, body = ''): string {
  const lines = Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)) });
  return `${method} ${path} HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`;
}

describe('an oversized body', () => {
  const declared = 2 * 1024 * 1024;
  const framings = {
    // Refused from its Content-Length, before a byte of it is read.
    'a declared length': [`content-length: ${declared}`, 'x'.repeat(declared)],
    // Refused once the bytes read pass the limit.
    'a chunked body': [
      'transfer-encoding: chunked',
      `${declared.toString(16)}\r\n${'x'.repeat(declared)}\r\n0\r\n\r\n`,
    ],
  };

  it.each(Object.entries(framings))(
    '%s: answered 413 with connection: close, not kept for a next request that would hang',
    async (_framing, [length, body]) => {
      const head = [
        'POST /v1/messages HTTP/1.1',
        `host: 127.0.0.1:${port}`,
        `authorization: Bearer ${emulator.modes.test.keys[0]}`,
        'content-type: application/json',
        'connection: keep-alive',
        length,
      ].join('\r\n');
      const next = request('GET', '/console/state', { host: `127.0.0.1:${port}` });
      // Given up on well before Node's own 5 s keep-alive timeout would close an idle connection.
      const answer = await rawExchange(port, [`${head}\r\n\r\n`, body as string, next], {
        untilClose: true,
        timeoutMs: 3000,
      });
      expect(answer.statuses).toEqual([413]);
      expect(answer.reasons).toEqual(['payload_too_large']);
      expect(answer.heads[0]).toMatch(/\r\nconnection: close/i);
      expect(answer.closed).toBe(true);
    },
  );
});
