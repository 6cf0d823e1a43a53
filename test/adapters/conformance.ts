import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignatureProfile } from '../../src/index.js';
import {
  createEvent,
  type SignedRequestOptions,
  createSignedRequest as signedRequest,
} from '../../src/testing.js';
import { type Reply, rawPost } from '../support/http.js';
import {
  ACCOUNT,
  CONFORMANCE_PROFILES,
  conformanceSecrets,
  FAILING_OPERATOR,
  type HandledEvent,
  MAX_BODY_BYTES,
  SECRET,
  SLOW_OPERATOR,
  TENANTS,
} from './conformance-receiver.js';

export { closeServer, listen } from '../support/http.js';

export interface ConformanceServer {
  /**
   * Full URL of the webhook route for the account ACCOUNT: the route has a parameter (`/webhooks/:account` in
   * the framework's syntax), so the URL ends in the account (`/webhooks/acme`); the other accounts' URLs are this
   * one with another last segment.
   */
  url: string;
  handled(): Promise<HandledEvent[]>;
  close(): Promise<void>;
}

/**
 * The cases, by key: pass a key in `options.skip` only when the framework itself answers before the adapter
 * runs (for example a route registered for POST only never sees a GET), re-frames its answer afterwards, or
 * drops what the case sends before the route sees it.
 */
export const conformanceCases = [
  'processed',
  'duplicate',
  'method_not_allowed',
  'unsupported_media_type',
  'compressed_body',
  'payload_too_large_declared',
  'payload_too_large_chunked',
  'signature_reasons',
  'invalid_json',
  'byte_order_mark',
  'invalid_event',
  'event_in_progress',
  'handler_failed_then_retry',
  'byte_exact_bodies',
  'concurrent_deliveries',
  'chunked_body',
  'sized_answers',
  'route_params',
  'query_string',
  'query_string_repeated',
  'tenants',
  'tenant_rotation',
  'unknown_tenant',
  'tenant_lookup_failed',
  'tenant_lookup_hung',
] as const;
export type ConformanceCase = (typeof conformanceCases)[number];

/** The cases of a receiver for many accounts: run under the default profile, whose receiver looks secrets up. */
const TENANT_CASES: ReadonlySet<string> = new Set<ConformanceCase>([
  'query_string',
  'query_string_repeated',
  'tenants',
  'tenant_rotation',
  'unknown_tenant',
  'tenant_lookup_failed',
  'tenant_lookup_hung',
]);

export interface ConformanceOptions {
  skip?: ConformanceCase[] | string[];
  /**
   * The signature profiles to run the whole suite under, each against a server `start` made with it. Default:
   * every profile of CONFORMANCE_PROFILES (the default format, then one that differs in every part).
   */
  profiles?: readonly SignatureProfile[];
}

/**
 * Defines the describe/it blocks: call it from one test file per adapter. `start` gets the profile its
 * receiver must verify (createConformanceReceiver(profile)); the cases sign through that same profile.
 */
export function runConformanceSuite(
  name: string,
  start: (profile: SignatureProfile) => Promise<ConformanceServer>,
  options: ConformanceOptions = {},
): void {
  for (const profile of options.profiles ?? CONFORMANCE_PROFILES) defineSuite(name, start, options, profile);
}

function defineSuite(
  name: string,
  start: (profile: SignatureProfile) => Promise<ConformanceServer>,
  options: ConformanceOptions,
  profile: SignatureProfile,
): void {
  const createSignedRequest = (event: unknown, signing: SignedRequestOptions) =>
    signedRequest(event, { ...signing, profile });
  const signedHeaders = (body: string, signing: HeaderOptions = {}) => headersUnder(profile, body, signing);
  const title = profile === CONFORMANCE_PROFILES[0] ? name : `${name}, profile ${profile.name}`;
  const skip = new Set<string>(options.skip ?? []);
  const unknown = [...skip].filter((key) => !(conformanceCases as readonly string[]).includes(key));
  if (unknown.length > 0) throw new Error(`Unknown conformance cases to skip: ${unknown.join(', ')}`);
  // The tenant cases need the receiver that looks each account's secrets up: the default profile's run.
  const tenants = conformanceSecrets(profile) === 'tenants';
  const test = (key: ConformanceCase, title: string, fn: () => Promise<void>) => {
    if (!skip.has(key) && (tenants || !TENANT_CASES.has(key))) it(`${key}: ${title}`, fn);
  };

  describe(`conformance: ${title}`, () => {
    let server: ConformanceServer;
    beforeAll(async () => {
      server = await start(profile);
    });
    afterAll(async () => {
      await server?.close();
    });

    const post = async (
      body: string | Uint8Array<ArrayBuffer>,
      headers: Record<string, string>,
      url = server.url,
    ): Promise<Reply> => {
      const response = await fetch(url, { method: 'POST', headers, body });
      return { status: response.status, headers: response.headers, text: await response.text() };
    };
    const deliver = (event: unknown, timestamp?: number) => {
      const signed = createSignedRequest(event, { secret: SECRET, ...(timestamp ? { timestamp } : {}) });
      return post(signed.body, signed.headers);
    };
    // The route's parameters and the tenant are the route_params and tenant cases': the others compare the event.
    const handledOf = async (id: string) =>
      (await server.handled())
        .filter((seen) => seen.id === id)
        .map(({ params: _params, tenant: _tenant, ...seen }) => seen);
    const urlFor = (account: string) => {
      if (!server.url.endsWith(`/${ACCOUNT}`))
        throw new Error(`The target's url must end in the account, /${ACCOUNT}, got ${server.url}`);
      return `${server.url.slice(0, -ACCOUNT.length)}${account}`;
    };

    test('processed', 'a signed event is answered 200 and its handler gets the typed event', async () => {
      const event = createEvent('message.delivered');
      const reply = await deliver(event);
      expectAccepted(reply, false);
      expect(await handledOf(event.id)).toEqual([
        { id: event.id, type: 'message.delivered', messageId: event.data.message_id, to: event.data.to },
      ]);
      const failed = createEvent('message.failed', { data: { message_id: 'msg_conformance_failed' } });
      expectAccepted(await deliver(failed), false);
      expect(await handledOf(failed.id)).toEqual([
        { id: failed.id, type: 'message.failed', messageId: 'msg_conformance_failed', to: failed.data.to },
      ]);
    });

    test(
      'duplicate',
      'a redelivery of a processed event is answered 200 duplicate, not run again',
      async () => {
        const event = createEvent('message.delivered');
        expectAccepted(await deliver(event), false);
        expectAccepted(await deliver(event, nowSeconds() + 1), true);
        expect(await handledOf(event.id)).toHaveLength(1);
      },
    );

    test('method_not_allowed', 'other methods are answered 405 with Allow: POST', async () => {
      for (const method of ['GET', 'PUT']) {
        const response = await fetch(server.url, {
          method,
          headers: { 'content-type': 'application/json' },
          ...(method === 'PUT' ? { body: '{}' } : {}),
        });
        const reply = { status: response.status, headers: response.headers, text: await response.text() };
        expectErrorReply(reply, 405, 'method_not_allowed');
        expect(reply.headers.get('allow')).toBe('POST');
      }
    });

    test(
      'unsupported_media_type',
      'a body that is not JSON by its content type is answered 415',
      async () => {
        const signed = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
        const reply = await post(signed.body, { ...signed.headers, 'content-type': 'text/plain' });
        expectErrorReply(reply, 415, 'unsupported_media_type');
      },
    );

    test(
      'compressed_body',
      'a compressed body (gzip, deflate, br) is answered 415 unsupported_encoding; identity is processed',
      async () => {
        const event = createEvent('message.delivered');
        const signed = createSignedRequest(event, { secret: SECRET });
        // Signed over the JSON, sent compressed: one answer whether or not the framework inflates it.
        for (const [encoding, compress] of COMPRESSIONS) {
          const headers = { ...signed.headers, 'content-encoding': encoding };
          const reply = await post(new Uint8Array(compress(Buffer.from(signed.body))), headers);
          const error = expectErrorReply(reply, 415, 'unsupported_encoding');
          expect(error.message).toContain('uncompressed');
        }
        expect(await handledOf(event.id)).toEqual([]);
        expectAccepted(await post(signed.body, { ...signed.headers, 'content-encoding': 'identity' }), false);
        expect(await handledOf(event.id)).toHaveLength(1);
      },
    );

    test(
      'payload_too_large_declared',
      'a body over the limit with Content-Length is answered 413',
      async () => {
        const body = Buffer.from(oversizedBody(MAX_BODY_BYTES + 1));
        const headers = signedHeaders(body.toString());
        const declared = { ...headers, 'content-length': String(body.length) };
        const { reply } = await rawPost(server.url, declared, [body]);
        expectErrorReply(reply, 413, 'payload_too_large');
        // A declared length far over the limit is refused before the body is read: only its first KiB is sent,
        // and the answer comes all the same. (Sending the whole MiB would race the server's close: a client
        // still writing when the connection is reset may lose the answer.)
        const huge = { ...headers, 'content-length': String(1024 * 1024) };
        const big = await rawPost(server.url, huge, [Buffer.alloc(1024, 0x20)], { leaveOpen: true });
        expectErrorReply(big.reply, 413, 'payload_too_large');
      },
    );

    test(
      'payload_too_large_chunked',
      'a chunked body is answered 413 once it passes the limit, before the client finished sending',
      async () => {
        const chunk = Buffer.alloc(16 * 1024, 0x20);
        const chunks = Array.from({ length: 64 }, () => chunk); // 1 MiB offered, 16× the limit
        const { reply, bytesSent } = await rawPost(server.url, signedHeaders('{}'), chunks, { pauseMs: 5 });
        expectErrorReply(reply, 413, 'payload_too_large');
        // The answer came while the body was still streaming: the adapter stopped reading past the limit.
        expect(bytesSent).toBeLessThan(chunks.length * chunk.length);
      },
    );

    test('signature_reasons', 'each signature problem is answered 401 with its reason', async () => {
      const event = createEvent('message.delivered');
      const body = JSON.stringify(event);
      const now = nowSeconds();
      const cases: Array<[string, Record<string, string>]> = [
        ['missing_signature', { 'content-type': 'application/json' }],
        ['malformed_signature', signedHeaders(body, { header: `t=${now}x,v1=00` })],
        ['stale_timestamp', signedHeaders(body, { timestamp: now - 3600 })],
        ['future_timestamp', signedHeaders(body, { timestamp: now + 3600 })],
        ['signature_mismatch', signedHeaders(body, { secret: 'whsec_not_this_endpoint' })],
      ];
      for (const [reason, headers] of cases) expectErrorReply(await post(body, headers), 401, reason);
      // A body changed after signing (one byte) no longer matches.
      const tampered = body.replace(event.data.to, '+15550000000');
      expectErrorReply(await post(tampered, signedHeaders(body)), 401, 'signature_mismatch');
      expect(await handledOf(event.id)).toEqual([]);
    });

    test('invalid_json', 'a signed body that is not JSON is answered 400 invalid_json', async () => {
      const body = '{"id": "evt_truncated", "type": ';
      expectErrorReply(await post(body, signedHeaders(body)), 400, 'invalid_json');
    });

    test('byte_order_mark', 'a UTF-8 byte order mark before signed JSON is ignored: processed', async () => {
      const event = createEvent('message.delivered');
      const body = `\uFEFF${JSON.stringify(event)}`;
      expectAccepted(await post(Buffer.from(body, 'utf8'), signedHeaders(body)), false);
      expect(await handledOf(event.id as string)).toHaveLength(1);
    });

    test('invalid_event', 'a verified event that breaks its schema is answered 422 with paths', async () => {
      const secretValue = 'not-a-phone-VALUE-123';
      const event = createEvent('message.delivered', { data: { to: secretValue, message_id: 'bad' } });
      const reply = await deliver(event);
      const error = expectErrorReply(reply, 422, 'invalid_event');
      const paths = (error.issues as Array<{ path: string }>).map((issue) => issue.path).sort();
      expect(paths).toEqual(['data.message_id', 'data.to']);
      expect(error.message).toContain('data.to');
      expect(reply.text).not.toContain(secretValue);
      expect(await handledOf(event.id)).toEqual([]);
    });

    test(
      'event_in_progress',
      'a delivery of an event being processed is answered 409 + Retry-After',
      async () => {
        // Two copies in flight together: whichever claims first runs, and its handler holds the event until the
        // other copy was turned away, so the other always finds it claimed. No sleep decides which one goes
        // first. The Next example app's handler holds it 300 ms instead (its own code): a machine so loaded
        // that the second copy only arrives after the first was processed gets a duplicate; a fresh event
        // tries again.
        for (let round = 1; ; round++) {
          const event = createEvent('message.delivered', { data: { operator: SLOW_OPERATOR } });
          const replies = await Promise.all([deliver(event), deliver(event, nowSeconds() + 1)]);
          expect(await handledOf(event.id)).toHaveLength(1);
          const busy = replies.find((reply) => reply.status === 409);
          if (!busy && round < 5) {
            expect(replies.map((reply) => JSON.parse(reply.text).duplicate === true).sort()).toEqual([
              false,
              true,
            ]);
            continue;
          }
          expect(busy, 'one copy is answered 409 while the other runs').toBeDefined();
          const error = expectErrorReply(busy as Reply, 409, 'event_in_progress');
          expect(error.code).toBe('event_in_progress');
          expect(Number(busy?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
          expectAccepted(replies.find((reply) => reply !== busy) as Reply, false);
          return;
        }
      },
    );

    test(
      'handler_failed_then_retry',
      'a failing handler is answered 500 without its details; the retry is processed',
      async () => {
        const event = createEvent('message.delivered', { data: { operator: FAILING_OPERATOR } });
        const failed = await deliver(event);
        expectErrorReply(failed, 500, 'handler_failed');
        expect(failed.text).not.toContain('conformance: handler failure');
        expect(await handledOf(event.id)).toEqual([]);
        expectAccepted(await deliver(event, nowSeconds() + 1), false);
        expect(await handledOf(event.id)).toHaveLength(1);
      },
    );

    test('byte_exact_bodies', 'unicode, CRLF and pretty-printed bodies verify byte-exactly', async () => {
      const unicode = createEvent('message.delivered', { data: { operator: 'opérateur 𝄞😀 中文' } });
      const pretty = createEvent('message.delivered');
      const crlf = createEvent('message.failed');
      const bodies = [
        JSON.stringify({ ...unicode, note: 'astral 🦄 \u2028 é' }),
        `${JSON.stringify(pretty, null, 2)}\n`,
        JSON.stringify(crlf, null, '\t').replaceAll('\n', '\r\n'),
      ];
      for (const body of bodies) {
        const headers = { ...signedHeaders(body), 'content-type': 'application/json; charset=utf-8' };
        expectAccepted(await post(Buffer.from(body, 'utf8'), headers), false);
      }
      for (const event of [unicode, pretty, crlf]) expect(await handledOf(event.id)).toHaveLength(1);
    });

    test('concurrent_deliveries', '50 concurrent deliveries of one event run its handler once', async () => {
      const event = createEvent('message.delivered');
      const signed = createSignedRequest(event, { secret: SECRET });
      const replies = await Promise.all(Array.from({ length: 50 }, () => post(signed.body, signed.headers)));
      const processed = replies.filter((reply) => reply.status === 200 && !JSON.parse(reply.text).duplicate);
      expect(processed).toHaveLength(1);
      for (const reply of replies) {
        if (reply.status === 200) continue;
        expectErrorReply(reply, 409, 'event_in_progress');
      }
      expect(await handledOf(event.id)).toHaveLength(1);
    });

    test('chunked_body', 'a body sent in several chunks (split inside a character) verifies', async () => {
      const event = createEvent('message.delivered', { data: { operator: 'chunked 😀😀😀' } });
      const bytes = Buffer.from(JSON.stringify(event), 'utf8');
      const cut = bytes.indexOf(Buffer.from('😀')) + 2; // inside the 4 bytes of the emoji
      const chunks = [bytes.subarray(0, 10), bytes.subarray(10, cut), bytes.subarray(cut)];
      const { reply } = await rawPost(server.url, signedHeaders(bytes.toString('utf8')), chunks, {
        pauseMs: 10,
      });
      expectAccepted(reply, false);
      expect(await handledOf(event.id)).toHaveLength(1);
    });

    /** `event` signed with `secret`, posted to the route of `account`. */
    const deliverTo = (account: string, event: unknown, secret: string) => {
      const signed = createSignedRequest(event, { secret });
      return post(signed.body, signed.headers, urlFor(account));
    };
    const other = TENANTS.other;
    const tenantsOf = async (id: string) =>
      (await server.handled()).filter((seen) => seen.id === id).map((seen) => seen.tenant);

    test('route_params', "the route's parameters reach the receiver as request.params", async () => {
      const event = createEvent('message.delivered');
      expectAccepted(await deliver(event), false);
      const second = createEvent('message.delivered');
      expectAccepted(await deliverTo(other.account, second, tenants ? other.secret : SECRET), false);
      const paramsOf = async (id: string) =>
        (await server.handled()).filter((seen) => seen.id === id).map((seen) => seen.params);
      expect(await paramsOf(event.id)).toEqual([{ account: ACCOUNT }]);
      expect(await paramsOf(second.id)).toEqual([{ account: other.account }]);
    });

    test(
      'tenants',
      'two accounts on one route: each verified with its own secret, ctx.tenant says which',
      async () => {
        const event = createEvent('message.delivered');
        expectAccepted(await deliver(event), false);
        // The same event for the other account is that account's own: not a duplicate of the first.
        expectAccepted(await deliverTo(other.account, event, other.secret), false);
        expect((await tenantsOf(event.id)).sort()).toEqual([ACCOUNT, other.account].sort());
        // Signed with one account's secret and sent to the other's route: not that account's event.
        const crossed = createEvent('message.delivered');
        expectErrorReply(await deliverTo(other.account, crossed, SECRET), 401, 'signature_mismatch');
        expectErrorReply(await deliverTo(ACCOUNT, crossed, other.secret), 401, 'signature_mismatch');
        expect(await tenantsOf(crossed.id)).toEqual([]);
      },
    );

    test(
      'query_string',
      'the query reaches the receiver as sent: a tenant named by an encoded ?tenant= is verified as it',
      async () => {
        const { account, secret } = other;
        // Percent-encoded, among a repeated parameter: the account is read from the query, not the route.
        const event = createEvent('message.delivered');
        const encoded = encodeURIComponent(account).replace('b', '%62');
        const url = `${server.url}?note=a%26b&tenant=${encoded}&note=c`;
        const signed = createSignedRequest(event, { secret });
        expectAccepted(await post(signed.body, signed.headers, url), false);
        expect(await tenantsOf(event.id)).toEqual([account]);
      },
    );

    test(
      'query_string_repeated',
      'every value of a repeated query parameter arrives, in order: the first ?tenant= names the tenant',
      async () => {
        const { account, secrets } = TENANTS.rotating;
        const event = createEvent('message.delivered');
        const signed = createSignedRequest(event, { secret: secrets[0] });
        const url = `${server.url}?tenant=${account}&tenant=${other.account}`;
        expectAccepted(await post(signed.body, signed.headers, url), false);
        expect(await tenantsOf(event.id)).toEqual([account]);
      },
    );

    test(
      'tenant_rotation',
      'an account in the middle of a rotation: both of its secrets verify',
      async () => {
        const { account, secrets } = TENANTS.rotating;
        const [newer, older] = [createEvent('message.delivered'), createEvent('message.failed')];
        expectAccepted(await deliverTo(account, newer, secrets[0]), false);
        expectAccepted(await deliverTo(account, older, secrets[1]), false);
        expect([...(await tenantsOf(newer.id)), ...(await tenantsOf(older.id))]).toEqual([account, account]);
        const stranger = createEvent('message.delivered');
        expectErrorReply(await deliverTo(account, stranger, SECRET), 401, 'signature_mismatch');
      },
    );

    test('unknown_tenant', 'an account the lookup does not know is answered 401 unknown_tenant', async () => {
      const event = createEvent('message.delivered');
      const reply = await deliverTo(TENANTS.unknown, event, SECRET);
      expectErrorReply(reply, 401, 'unknown_tenant');
      expect(reply.text).not.toContain(SECRET);
      expect(await tenantsOf(event.id)).toEqual([]);
    });

    test(
      'tenant_lookup_failed',
      'a lookup that fails is answered 503 + Retry-After, nothing processed',
      async () => {
        const event = createEvent('message.delivered');
        const reply = await deliverTo(TENANTS.failing, event, SECRET);
        expectErrorReply(reply, 503, 'tenant_lookup_failed');
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(reply.text).not.toContain('secrets store is down');
        expect(await tenantsOf(event.id)).toEqual([]);
      },
    );

    test(
      'tenant_lookup_hung',
      "a lookup that never answers is answered 503 + Retry-After once the lookup's deadline passed",
      async () => {
        const event = createEvent('message.delivered');
        const reply = await deliverTo(TENANTS.hanging, event, SECRET);
        expectErrorReply(reply, 503, 'tenant_lookup_failed');
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(await tenantsOf(event.id)).toEqual([]);
      },
    );

    test('sized_answers', 'answers carry a Content-Length, never a chunked body', async () => {
      // One write per answer, and the framing webhook senders' HTTP clients handle best.
      const accepted = await deliver(createEvent('message.delivered'));
      const rejected = await post('{}', signedHeaders('{}', { secret: 'whsec_not_the_secret' }));
      for (const reply of [accepted, rejected]) {
        expect(reply.headers.get('content-length')).toBe(String(Buffer.byteLength(reply.text)));
        expect(reply.headers.get('transfer-encoding')).toBeNull();
      }
    });
  });
}

const COMPRESSIONS: ReadonlyArray<[string, (body: Buffer) => Buffer]> = [
  ['gzip', gzipSync],
  ['deflate', deflateSync],
  ['br', brotliCompressSync],
];

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

interface HeaderOptions {
  timestamp?: number;
  secret?: string;
  /** Replaces the value of the profile's signature header. */
  header?: string;
}

/** The headers of `body` signed under `profile` (a body that a body signature would change is not allowed). */
function headersUnder(
  profile: SignatureProfile,
  body: string,
  options: HeaderOptions,
): Record<string, string> {
  const signed = signedRequest(body, {
    secret: options.secret ?? SECRET,
    timestamp: options.timestamp ?? nowSeconds(),
    profile,
  });
  if (signed.body !== body)
    throw new Error(`The ${profile.name} profile changes the body: sign with deliver.`);
  const headers = signed.headers;
  if (options.header !== undefined) headers[profile.signatureHeader as string] = options.header;
  return headers;
}

/** A valid-looking JSON body of exactly `size` bytes. */
function oversizedBody(size: number): string {
  const prefix = '{"pad":"';
  return `${prefix}${'x'.repeat(size - prefix.length - 2)}"}`;
}

function expectAccepted(reply: Reply, duplicate: boolean): void {
  expect({ status: reply.status, text: reply.text }).toEqual({
    status: 200,
    text: duplicate ? '{"received":true,"duplicate":true}' : '{"received":true}',
  });
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  expect(reply.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
}

/** Checks the service's error shape and that the request id is the same in body and header. */
function expectErrorReply(reply: Reply, status: number, code: string): Record<string, unknown> {
  expect({ status: reply.status, text: reply.text }).toMatchObject({ status });
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(reply.text) as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect((body.error.message as string).length).toBeGreaterThan(10);
  expect(body.error.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(reply.headers.get('x-request-id')).toBe(body.error.request_id);
  return body.error;
}
