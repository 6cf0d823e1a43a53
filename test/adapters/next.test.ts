import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { NextApiHandler } from 'next';
import { apiResolver } from 'next/dist/server/api-utils/node/api-resolver.js';
import type { NextRequest } from 'next/server.js';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createPagesHandler, createRouteHandler } from '../../adapters/next.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { describeGarbledInput } from '../hardening/garbled-input.js';
import { describeProtocolAbuse } from '../hardening/protocol-abuse.js';
import { describeSlowBody } from '../hardening/slow-body.js';
import {
  BODY_TIMEOUT_MS as HARDENING_BODY_TIMEOUT_MS,
  MAX_BODY_BYTES as HARDENING_MAX_BODY_BYTES,
  SECRET as HARDENING_SECRET,
  type Target,
} from '../hardening/targets.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { ACCOUNT, CONFORMANCE_PROFILES, createConformanceReceiver, SECRET } from './conformance-receiver.js';
import { buildNext, conformanceEnv, exampleRoute, type NextApp, startNext } from './next-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const nextBin = fileURLToPath(new URL('../../node_modules/next/dist/bin/next', import.meta.url));
const example: NextApp = { cwd: root, next: nextBin, app: 'examples/next-app' };

// The example app, built and started like in production: `next build` with no secret in the environment
// (the receiver is created at the first request, not at import), then `next start` with the secret.
// Its receiver is configured from the environment to behave like createConformanceReceiver.
const { WEBHOOK_SECRET: _outerSecret, ...outerEnv } = process.env;
const buildEnv = { ...outerEnv, NEXT_TELEMETRY_DISABLED: '1' };
let base = '';
let stopNext = async () => {};
beforeAll(async () => {
  // The example imports the package by its name, which resolves to the build (dist/) through its exports map.
  if (!existsSync(new URL('../../dist/adapters/next.js', import.meta.url))) {
    throw new Error('examples/next-app imports messaging-webhooks from dist/: run `npm run build` first.');
  }
  await buildNext(example, buildEnv);
  const started = await startNext(example, conformanceEnv(buildEnv));
  base = started.base;
  stopNext = started.stop;
}, 240_000);

afterAll(() => stopNext());

describe('the example started without its secret', () => {
  it('answers each webhook route 500 receiver_misconfigured, saying which option is missing', async () => {
    const unconfigured = await startNext(example, buildEnv);
    try {
      for (const path of ['/api/webhooks', '/api/webhooks-pages']) {
        const signed = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
        const response = await fetch(`${unconfigured.base}${path}`, {
          method: 'POST',
          headers: signed.headers,
          body: signed.body,
        });
        expect(response.status).toBe(500);
        const { error } = (await response.json()) as {
          error: { code: string; message: string; request_id: string };
        };
        expect(error.code).toBe('receiver_misconfigured');
        expect(error.message).toContain('No webhook secret was given');
        expect(response.headers.get('x-request-id')).toBe(error.request_id);
      }
    } finally {
      await unconfigured.stop();
    }
  }, 60_000);
});

// The example app's receiver verifies the default profile only (it is configured from its environment, which
// names no profile): the other profiles run against the in-process adapters, the same handler code.
const defaultOnly = { profiles: CONFORMANCE_PROFILES.slice(0, 1) };
// Next.js itself drops a route handler's Content-Length and streams the answer chunked (FORBIDDEN_HEADERS in
// next/dist/server/send-response.js); the handler does set it, as the fetch adapter's suite checks.
// The accounts' routes (`[account]` segments) on one receiver that looks each account's secrets up. The example
// records what its handlers saw, ctx.tenant included, but not the request's params: the tenant cases show the
// segment reached the receiver, and next-params.test.ts shows what each Next major hands the adapters.
runConformanceSuite(
  'next.js app router (next start)',
  exampleRoute(() => base, `/api/webhooks/${ACCOUNT}`),
  {
    ...defaultOnly,
    skip: ['sized_answers', 'route_params'],
  },
);
runConformanceSuite(
  'next.js pages router (next start, bodyParser: false)',
  exampleRoute(() => base, `/api/webhooks-pages/${ACCOUNT}`),
  { ...defaultOnly, skip: ['route_params'] },
);

// The hardening suites against the same build, started a second time configured like their in-process
// targets (their secret, body limit and a short body deadline). Both routers share the one server.
let hardening: Promise<{ base: string; stop(): Promise<void> }> | undefined;
afterAll(async () => (await hardening)?.stop());
function hardeningTarget(path: string): () => Promise<Target> {
  return async () => {
    hardening ??= startNext(example, {
      ...buildEnv,
      WEBHOOK_SECRET: HARDENING_SECRET,
      MAX_BODY_BYTES: String(HARDENING_MAX_BODY_BYTES),
      BODY_TIMEOUT_MS: String(HARDENING_BODY_TIMEOUT_MS),
    });
    const { base } = await hardening;
    return {
      url: `${base}${path}`,
      port: Number(new URL(base).port),
      handled: async () =>
        (
          (await (await fetch(`${base}/api/webhooks/events`)).json()) as { events: { id: string }[] }
        ).events.map((event) => event.id),
      close: async () => {}, // stopped once, after every suite of this file
    };
  };
}
for (const [router, path] of [
  ['next.js app router', '/api/webhooks'],
  ['next.js pages router', '/api/webhooks-pages'],
] as const) {
  describeGarbledInput(router, hardeningTarget(path));
  describeProtocolAbuse(router, hardeningTarget(path));
  describeSlowBody(router, hardeningTarget(path));
}

describe('the go-live check (messaging-webhooks check) against the Next.js example', () => {
  it.each(['/api/webhooks', '/api/webhooks-pages'])(
    'passes all 8 checks on %s',
    async (path) => {
      const cli = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
      const child = spawn(process.execPath, [cli, 'check', `${base}${path}`, '--secret', SECRET, '--json'], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
      const [code] = (await once(child, 'exit')) as [number | null];
      const report = JSON.parse(stdout) as { checks: { id: string; passed: boolean }[] };
      expect(report.checks.filter((check) => !check.passed)).toEqual([]);
      expect(report.checks).toHaveLength(8);
      expect(code).toBe(0);
    },
    60_000,
  );
});

describe('next.js pages router with the body parser left on', () => {
  // Next's own API resolver (what `next start` runs for pages/api) around the handler, on a node:http server.
  const serve = async (config: object) => {
    const { receiver, handled } = createConformanceReceiver();
    const errors: string[] = [];
    receiver.onError((error) => {
      errors.push(error.code);
    });
    const route = { default: createPagesHandler(receiver), config };
    const apiContext = {
      previewModeId: '',
      previewModeEncryptionKey: '',
      previewModeSigningKey: '',
      dev: false,
    };
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      void apiResolver(req, res, {}, route, apiContext, false);
    });
    return { url: `${await listen(server)}/api/webhooks`, server, handled, errors };
  };

  it('answers 500 body_already_parsed, tells onError, and names the config to add', async () => {
    const { url, server, handled, errors } = await serve({});
    try {
      const event = createEvent('message.delivered');
      const signed = createSignedRequest(event, { secret: SECRET });
      const response = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
      expect(response.status).toBe(500);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('body_already_parsed');
      expect(error.message).toContain('got a plain object (already-parsed JSON)');
      expect(error.message).toContain('export const config = { api: { bodyParser: false } };');
      expect(errors).toEqual(['body_already_parsed']);
      expect(handled).toEqual([]);
    } finally {
      await closeServer(server);
    }
  });

  it('processes the same delivery once the route exports bodyParser: false', async () => {
    const { url, server, handled } = await serve({ api: { bodyParser: false } });
    try {
      const event = createEvent('message.delivered');
      const signed = createSignedRequest(event, { secret: SECRET });
      const response = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
      expect(response.status).toBe(200);
      expect(handled.map((seen) => seen.id)).toEqual([event.id]);
    } finally {
      await closeServer(server);
    }
  });
});

describe('next.js types', () => {
  it('fits what Next calls: a route handler export and a Pages API handler', () => {
    const { receiver } = createConformanceReceiver();
    type RouteHandler = (
      request: NextRequest,
      context: { params: Promise<Record<string, string>> },
    ) => unknown;
    expectTypeOf(createRouteHandler(receiver)).toExtend<RouteHandler>();
    expectTypeOf(createPagesHandler(receiver)).toExtend<NextApiHandler>();
  });
});
