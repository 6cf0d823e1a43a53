import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll } from 'vitest';
import { type ConformanceServer, runConformanceSuite } from '../adapters/conformance.js';
import { ACCOUNT, type HandledEvent } from '../adapters/conformance-handlers.js';
import { CONFORMANCE_PROFILES } from '../adapters/conformance-receiver.js';
import { root } from '../support/build.js';
import { start } from '../support/child-processes.js';
import { type Consumer, installPackedPackage } from '../support/packed-package.js';
import { bundleWorker, compileEntry } from './bundle.js';

/**
 * The Fetch adapter's conformance cases inside the runtimes users deploy it to, each loading the package
 * from its packed tarball: real Bun, real Deno, workerd (Cloudflare Workers) through Miniflare, and Hono on
 * Node and under Bun. The suite runs here and reaches every runtime over a real loopback socket.
 */

let consumer: Consumer;
beforeAll(async () => {
  consumer = await installPackedPackage();
}, 180_000);
afterAll(() => consumer?.remove());

/**
 * The apps build their receivers inside the runtime with the default profile. Verifying under another profile
 * is the same code on every runtime, and the Fetch adapter's own run covers both profiles.
 */
const DEFAULT_PROFILE_ONLY = { profiles: CONFORMANCE_PROFILES.slice(0, 1) };

const bin = (name: string) => join(root, 'node_modules/.bin', name);

/** A conformance target served by a runtime in a child process that prints the port it listens on. */
function childTarget(entry: string, command: (file: string) => string[]): () => Promise<ConformanceServer> {
  return async () => {
    const file = await compileEntry(consumer.dir, entry);
    const server = start(command(file), { NO_COLOR: '1' }, consumer.dir);
    const [, base] = await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
    return target(base as string, () => server.stop().then(() => {}));
  };
}

function target(base: string, close: () => Promise<void>): ConformanceServer {
  return {
    url: `${base}/webhooks/${ACCOUNT}`,
    handled: async () => (await (await fetch(`${base}/handled`)).json()) as HandledEvent[],
    close,
  };
}

runConformanceSuite(
  'Bun (Bun.serve)',
  childTarget('bun', (file) => [bin('bun'), file]),
  DEFAULT_PROFILE_ONLY,
);

runConformanceSuite(
  'Deno (Deno.serve)',
  childTarget('deno', (file) => [
    bin('deno'),
    'run',
    '--quiet',
    '--no-lock',
    '--node-modules-dir=manual',
    '--allow-net=127.0.0.1',
    '--allow-read',
    '--allow-env',
    file,
  ]),
  DEFAULT_PROFILE_ONLY,
);

runConformanceSuite(
  'Hono on Node (@hono/node-server)',
  childTarget('hono-node', (file) => [process.execPath, file]),
  DEFAULT_PROFILE_ONLY,
);

runConformanceSuite(
  'Hono under Bun',
  childTarget('hono-bun', (file) => [bin('bun'), file]),
  DEFAULT_PROFILE_ONLY,
);

runConformanceSuite(
  'Cloudflare Workers (workerd through Miniflare)',
  async () => {
    const scriptPath = await bundleWorker(consumer.dir);
    const mf = new Miniflare({
      modules: true,
      scriptPath,
      // The newest date the installed workerd binary supports.
      compatibilityDate: '2026-05-03',
      host: '127.0.0.1',
      port: 0,
    });
    const url = await mf.ready;
    return target(url.origin, () => mf.dispose());
  },
  // workerd gzips answers for clients that accept it (undici's fetch does), as Cloudflare's edge does, and so
  // frames them chunked: the platform chooses that framing, after the adapter answered with a Content-Length.
  { skip: ['sized_answers'], ...DEFAULT_PROFILE_ONLY },
);
