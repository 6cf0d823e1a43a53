import { Console } from 'node:console';
import { PassThrough, Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ReceiveRequest } from '../../src/adapter.js';
import { createReceiver, type DedupeStore, MemoryDedupeStore } from '../../src/index.js';
import { signPayload } from '../../src/signature/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { captureLogText } from '../setup/log-capture.js';

const LIVE = 'whsec_logline_live_0_7c1e9a3b5d2f';
const TEST = 'whsec_logline_test_0_4a8c2e6f0b1d';
const WRONG = 'whsec_logline_wrong_9e3c7a1f5b2d';

const request = (body: string, headers: Record<string, string>): ReceiveRequest => ({
  method: 'POST',
  headers,
  rawBody: body,
});

/** Everything a stream was given, as text, also handed to the suite's secret scan. */
function collect() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    captureLogText(chunk.toString('utf8'));
  });
  return { stream, text: () => text };
}

/** A delivery signed with the wrong secret, its wrong signature, and a processed one. */
function deliveries(secret: string) {
  const event = createEvent('message.delivered');
  const body = JSON.stringify(event);
  const wrong = signPayload({ payload: body, secret: WRONG, timestamp: Math.floor(Date.now() / 1000) });
  return {
    event,
    signed: request(body, createSignedRequest(event, { secret }).headers),
    mismatch: request(body, { 'content-type': 'application/json', 'webhook-signature': wrong }),
    wrong,
  };
}

describe('logger: console (and any logger without child)', () => {
  it('one readable line per request: outcome, request id, status, duration, then key=value', async () => {
    const out = collect();
    const err = collect();
    const console = new Console({ stdout: out.stream, stderr: err.stream });
    const receiver = createReceiver({ secrets: { live: [LIVE], test: [TEST] }, logger: console });
    receiver.on('message.delivered', () => undefined);
    const { event, signed, mismatch, wrong } = deliveries(TEST);
    const processed = await receiver.receive(signed);
    const rejected = await receiver.receive(mismatch);
    const lines = out.text().split('\n').filter(Boolean);
    // console.warn writes to stderr, console.info to stdout: one line each, nothing else.
    const warnLines = err.text().split('\n').filter(Boolean);
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^webhook processed ${processed.requestId} 200 [\\d.]+ms eventId=${event.id} eventType=message.delivered mode=test$`,
        ),
      ),
    ]);
    expect(warnLines).toHaveLength(1);
    const [line] = warnLines as [string];
    expect(line).toMatch(
      new RegExp(`^webhook rejected: signature_mismatch ${rejected.requestId} 401 [\\d.]+ms `),
    );
    expect(line).toContain('hint="No signature in the webhook-signature header matches');
    expect(line).toMatch(/ body\.bytes=\d+ body\.sha256Prefix=[0-9a-f]{12} /);
    expect(line).toContain(' headers.present=content-type,webhook-signature ');
    expect(line).toMatch(/ signature\.wellFormed=1 signature\.clockSkewSeconds=-?\d+ /);
    expect(line).toMatch(/ secretsTried=live\[0\],test\[0\]$/);
    expect(line).not.toContain('[Object]');
    for (const secret of [LIVE, TEST, WRONG, wrong.slice(wrong.indexOf('v1=') + 3)])
      expect(out.text() + err.text()).not.toContain(secret);
  });

  it('a value a sender controls is JSON-quoted: it cannot start a line or pass for another field', async () => {
    const lines: string[] = [];
    const logger = { info: (line: string) => lines.push(line), warn: () => {}, error: () => {} };
    const receiver = createReceiver({ secrets: LIVE, logger });
    const event = { ...createEvent('message.delivered'), type: 'odd type\nwebhook processed x=1' };
    const body = JSON.stringify(event);
    const headers = createSignedRequest(body, { secret: LIVE }).headers;
    await receiver.receive({ ...request(body, headers), requestId: 'req 1 status=500' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^webhook processed "req 1 status=500" 200 [\d.]+ms eventId=evt_\w+ eventType="odd type\\nwebhook processed x=1"$/,
    );
  });

  it('a line separator JSON leaves raw (U+2028, U+2029, U+0085) is escaped: a line reader sees one line', async () => {
    const lines: string[] = [];
    const logger = { info: (line: string) => lines.push(line), warn: () => {}, error: () => {} };
    const receiver = createReceiver({ secrets: LIVE, logger });
    const event = {
      ...createEvent('message.delivered'),
      id: 'evt_a\u2028webhook processed x=1',
      type: 'odd\u2029type\u0085webhook\u009b31m\u202eprocessed',
    };
    const body = JSON.stringify(event);
    await receiver.receive(request(body, createSignedRequest(body, { secret: LIVE }).headers));
    expect(lines).toHaveLength(1);
    const line = lines[0] as string;
    // What Python's str.splitlines() and many log shippers take for the end of a line.
    const breaks = ['\n', '\v', '\f', '\r', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029'];
    expect(breaks.filter((lineBreak) => line.includes(lineBreak))).toEqual([]);
    expect(line).toMatch(/^[^\u0080-\u009f\u2028\u2029\u202e]*$/);
    expect(line).toContain(' eventId="evt_a\\u2028webhook processed x=1" ');
    expect(line).toMatch(/ eventType="odd\\u2029type\\u0085webhook\\u009b31m\\u202eprocessed"$/);
    // Still JSON: the quoted value reads back as the sender's text.
    expect(JSON.parse((/eventType=(".*")$/.exec(line) as RegExpExecArray)[1] as string)).toBe(event.type);
  });
});

describe('logger: pino', () => {
  it('is used as it is: one JSON line per request, with the fields and nested diagnostics', async () => {
    const chunks: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        captureLogText(chunk.toString('utf8'));
        done();
      },
    });
    const receiver = createReceiver({ secrets: { live: [LIVE], test: [TEST] }, logger: pino(destination) });
    receiver.on('message.delivered', () => undefined);
    const { event, signed, mismatch } = deliveries(LIVE);
    const processed = await receiver.receive(signed);
    const rejected = await receiver.receive(mismatch);
    const lines = chunks.join('').split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    const [ok, refused] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(ok).toMatchObject({
      level: 30,
      msg: 'webhook processed',
      requestId: processed.requestId,
      status: 200,
      outcome: 'processed',
      eventId: event.id,
      eventType: 'message.delivered',
      mode: 'live',
      durationMs: expect.any(Number),
    });
    expect(refused).toMatchObject({
      level: 40,
      msg: 'webhook rejected: signature_mismatch',
      requestId: rejected.requestId,
      status: 401,
      outcome: 'signature_mismatch',
      reason: 'signature_mismatch',
      hint: expect.stringMatching(/^No signature in the webhook-signature header matches/),
      diagnostics: { secretsTried: ['live[0]', 'test[0]'], signature: { wellFormed: 1 } },
    });
  });
});

describe('mode in the log', () => {
  it('a single secret or list names no mode: no mode field, and its secrets are secrets[0]…', async () => {
    const lines: string[] = [];
    const logger = {
      info: (line: string) => lines.push(line),
      warn: (line: string) => lines.push(line),
      error: () => {},
    };
    const receiver = createReceiver({ secrets: [LIVE, TEST], logger });
    const { signed, mismatch } = deliveries(TEST);
    await receiver.receive(signed);
    await receiver.receive(mismatch);
    expect(lines).toHaveLength(2);
    expect(lines.join('\n')).not.toMatch(/ mode=|live\[/);
    expect(lines[1]).toMatch(/ secretsTried=secrets\[0\],secrets\[1\]$/);
  });
});

describe('a failure on this side in the log line', () => {
  it('a 5xx line says what failed (the error onError got, cause included), not the signature diagnostics', async () => {
    const lines: string[] = [];
    const logger = { info: () => {}, warn: () => {}, error: (line: string) => lines.push(line) };
    const receiver = createReceiver({ secrets: LIVE, logger });
    receiver.on('message.delivered', () => {
      throw new Error('orders table locked');
    });
    const { signed } = deliveries(LIVE);
    const outcome = await receiver.receive(signed);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^webhook rejected: handler_failed ${outcome.requestId} 500 [\\d.]+ms eventId=evt_\\w+ `),
    );
    expect(lines[0]).toMatch(
      /hint="A handler for this event failed\. [^"]*" error="A handler for message\.delivered failed; [^"]* Cause: orders table locked"$/,
    );
    expect(lines[0]).not.toContain('secretsTried');
  });

  it('a 200 whose completion the store failed to record: the info line carries the store error', async () => {
    const lines: string[] = [];
    const logger = { info: (line: string) => lines.push(line), warn: () => {}, error: () => {} };
    const memory = new MemoryDedupeStore();
    const store: DedupeStore = {
      claim: (key, leaseMs) => memory.claim(key, leaseMs),
      complete: () => Promise.reject(new Error('connection reset by 10.0.0.7:6379')),
      renew: (key, token, leaseMs) => memory.renew(key, token, leaseMs),
      release: (key, token) => memory.release(key, token),
    };
    const receiver = createReceiver({ secrets: LIVE, store, logger });
    receiver.on('message.delivered', () => {});
    expect((await receiver.receive(deliveries(LIVE).signed)).status).toBe(200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^webhook processed .* error="The dedupe store failed to record a completed event\. Cause: connection reset by 10\.0\.0\.7:6379"$/,
    );
  });
});

describe('log line: what a terminal would act on', () => {
  it("a handler error's DEL, C1 and line separators are escaped, not only the C0 JSON escapes", async () => {
    const lines: string[] = [];
    const logger = { info: () => {}, warn: () => {}, error: (line: string) => lines.push(line) };
    const receiver = createReceiver({ secrets: LIVE, logger });
    receiver.on('message.delivered', () => {
      throw new Error('locked\u009b2J\u0085\u2028\u2029\u007f\u001b[8m');
    });
    expect((await receiver.receive(deliveries(LIVE).signed)).status).toBe(500);
    expect(lines).toHaveLength(1);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may reach the line
    expect(lines[0]).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(lines[0]).toContain('Cause: locked\\u009b2J\\u0085');
    expect(lines[0]).toMatch(/\\u007f\\u001b\[8m"$/);
  });
});
