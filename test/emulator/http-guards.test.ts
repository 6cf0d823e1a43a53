import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookConfigError } from '../../src/base/errors.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { rawExchange } from '../support/raw-http.js';

let emulator: Emulator;
let port: number;

beforeAll(async () => {
  emulator = await startEmulator({ allowedHosts: ['emulator.test'] });
  port = Number(new URL(emulator.url).port);
});

afterAll(() => emulator.close());

function request(method: string, path: string, headers: Record<string, string>, body = ''): string {
  const lines = Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)) });
  return `${method} ${path} HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`;
}

/** One request with the headers a browser page would send (Host, Origin), which fetch does not let us set. */
function send(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const code = (text: string) => (JSON.parse(text) as { error?: { code: string } }).error?.code;
const paused = async () =>
  (
    JSON.parse((await send('GET', '/console/state', { host: `127.0.0.1:${port}` })).text) as {
      modes: { mode: string; paused: boolean }[];
    }
  ).modes.find((mode) => mode.mode === 'test')?.paused;

describe('the host a request names (DNS rebinding)', () => {
  it('a page under another name reads nothing of the console: 403 naming allowedHosts', async () => {
    const key = emulator.modes.test.keys[0] as string;
    const sent = await send(
      'POST',
      '/v1/otp/send',
      { host: `127.0.0.1:${port}`, authorization: `Bearer ${key}` },
      { to: '+15550100001', purpose: 'login', ttl_seconds: 300 },
    );
    expect(sent.status).toBe(202);
    const otp = /Your code is (\d{6})/.exec(sent.text)?.[1] as string;
    expect(otp).toMatch(/^\d{6}$/);
    for (const path of ['/console/state', '/', '/console/stream']) {
      const answer = await send('GET', path, { host: `attacker.example:${port}` });
      expect([answer.status, code(answer.text)]).toEqual([403, 'host_not_allowed']);
      expect(answer.text).toContain('allowedHosts: [\\"attacker.example\\"]');
      expect(answer.text).toContain('--allowed-host attacker.example');
      expect(answer.text).not.toContain(otp);
    }
  });

  it('a page under another name cannot act: no pause, no API call with the default keys', async () => {
    const attacker = { host: `attacker.example:${port}`, origin: `http://attacker.example:${port}` };
    const pause = await send('POST', '/console/actions', attacker, { action: 'pause', mode: 'test' });
    expect([pause.status, code(pause.text)]).toEqual([403, 'host_not_allowed']);
    expect(await paused()).toBe(false);
    const key = emulator.modes.test.keys[0] as string;
    const api = await send(
      'POST',
      '/v1/messages',
      { ...attacker, authorization: `Bearer ${key}` },
      {
        to: '+15550100001',
        sender: 'Acme',
        body: 'Hi',
      },
    );
    expect([api.status, code(api.text)]).toEqual([403, 'host_not_allowed']);
  });

  it('answers localhost, IP addresses and the names given at start, any port, any case', async () => {
    for (const host of [
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
      'emulator.test',
      `EMULATOR.test:${port}`,
      'app.localhost',
    ]) {
      expect((await send('GET', '/console/state', { host })).status, host).toBe(200);
    }
  });

  it('refuses allowedHosts that are not host names, naming the option', async () => {
    for (const bad of [['http://emulator.test'], ['emulator.test:4010'], [''], 'emulator.test']) {
      await expect(startEmulator({ allowedHosts: bad as string[] })).rejects.toThrow(WebhookConfigError);
      await expect(startEmulator({ allowedHosts: bad as string[] })).rejects.toThrow(/allowedHosts/);
    }
  });
});

describe('writes from another site', () => {
  const local = () => ({ host: `127.0.0.1:${port}` });

  it('refuses a POST whose Origin is not an allowed host, or that the browser marks cross-site', async () => {
    for (const headers of [
      { ...local(), origin: 'http://attacker.example' },
      { ...local(), origin: 'null' },
      { ...local(), 'sec-fetch-site': 'cross-site' },
    ]) {
      const answer = await send('POST', '/console/actions', headers, { action: 'pause', mode: 'test' });
      expect([answer.status, code(answer.text)]).toEqual([403, 'cross_origin_refused']);
      expect(answer.text).toContain('allowedHosts');
    }
    expect(await paused()).toBe(false);
  });

  it("takes the console's own writes", async () => {
    const own = { ...local(), origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' };
    const pause = await send('POST', '/console/actions', own, { action: 'pause', mode: 'test' });
    expect(pause.status).toBe(200);
    expect(await paused()).toBe(true);
    const resume = await send(
      'POST',
      '/console/actions',
      { ...local(), origin: 'http://emulator.test' },
      { action: 'resume', mode: 'test' },
    );
    expect(resume.status).toBe(200);
    expect(await paused()).toBe(false);
  });
});

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
