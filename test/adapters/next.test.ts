import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { NextApiHandler } from 'next';
import { apiResolver } from 'next/dist/server/api-utils/node/api-resolver.js';
import type { NextRequest } from 'next/server.js';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createPagesHandler, createRouteHandler } from '../../adapters/next.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { type ConformanceServer, closeServer, listen, runConformanceSuite } from './conformance.js';
import {
  createConformanceReceiver,
  FAILING_OPERATOR,
  type HandledEvent,
  MAX_BODY_BYTES,
  SECRET,
  SLOW_OPERATOR,
} from './conformance-receiver.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const nextBin = fileURLToPath(new URL('../../node_modules/next/dist/bin/next', import.meta.url));
const app = 'examples/next-app';

/** Runs a command to its end; fails with the tail of its output. */
async function run(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}:\n${output.slice(-4000)}`);
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls until the app answers, at most 30 s. */
async function waitUntilUp(url: string, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`next start exited with ${server.exitCode}`);
    const up = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer within 30 s`);
}

// The example app, built and started like in production: `next build`, then `next start` on a loopback port.
// Its receiver is configured from the environment to behave like createConformanceReceiver.
let base = '';
let nextServer: ChildProcess | undefined;
beforeAll(async () => {
  // The example imports the package by its name, which resolves to the build (dist/) through its exports map.
  if (!existsSync(new URL('../../dist/adapters/next.js', import.meta.url))) {
    throw new Error('examples/next-app imports messaging-webhooks from dist/: run `npm run build` first.');
  }
  const env = {
    ...process.env,
    NEXT_TELEMETRY_DISABLED: '1',
    WEBHOOK_SECRET: SECRET,
    MAX_BODY_BYTES: String(MAX_BODY_BYTES),
    SIMULATE_FAILURE_OPERATOR: FAILING_OPERATOR,
    SIMULATE_SLOW_OPERATOR: SLOW_OPERATOR,
  };
  await run([nextBin, 'build', app], { ...env, NODE_ENV: 'production' });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // Its own process group, so that the server and anything it spawned stop together.
  nextServer = spawn(process.execPath, [nextBin, 'start', app, '-p', String(port), '-H', '127.0.0.1'], {
    cwd: root,
    env: { ...env, NODE_ENV: 'production' },
    stdio: 'ignore',
    detached: true,
  });
  await waitUntilUp(`${base}/api/webhooks/events`, nextServer);
}, 240_000);

afterAll(async () => {
  const server = nextServer;
  if (server?.pid === undefined || server.exitCode !== null) return;
  const exited = once(server, 'exit');
  process.kill(-server.pid, 'SIGTERM');
  await exited;
});

/** Both routes share the example's one receiver; the events route lists what its handlers processed. */
function exampleApp(path: string): () => Promise<ConformanceServer> {
  return async () => ({
    url: `${base}${path}`,
    handled: async () =>
      ((await (await fetch(`${base}/api/webhooks/events`)).json()) as { events: HandledEvent[] }).events,
    close: async () => {}, // the server is stopped once, after both suites
  });
}

// Next.js itself drops a route handler's Content-Length and streams the answer chunked (FORBIDDEN_HEADERS in
// next/dist/server/send-response.js); the handler does set it, as the fetch adapter's suite checks.
runConformanceSuite('next.js app router (next start)', exampleApp('/api/webhooks'), {
  skip: ['sized_answers'],
});
runConformanceSuite(
  'next.js pages router (next start, bodyParser: false)',
  exampleApp('/api/webhooks-pages'),
);

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
