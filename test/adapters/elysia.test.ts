import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { root } from '../support/build.js';
import { start } from '../support/child-processes.js';
import { type ConformanceServer, runConformanceSuite } from './conformance.js';
import { ACCOUNT, CONFORMANCE_PROFILES, type HandledEvent, SECRET } from './conformance-receiver.js';

/**
 * The Fetch handler on Elysia routes in real Bun (test/adapters/elysia-app.ts), reached over a real
 * loopback socket: the whole conformance suite under each signature profile, and the parsed-body mistake.
 */

const bun = join(root, 'node_modules/.bin/bun');

async function startElysia(profileName = CONFORMANCE_PROFILES[0]?.name): Promise<{
  base: string;
  stop(): Promise<unknown>;
}> {
  const app = start([bun, join(root, 'test/adapters/elysia-app.ts'), String(profileName)], { NO_COLOR: '1' });
  const [, base] = await app.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
  return { base: base as string, stop: () => app.stop() };
}

runConformanceSuite('Elysia under Bun (parse: none)', async (profile): Promise<ConformanceServer> => {
  const { base, stop } = await startElysia(profile.name);
  return {
    url: `${base}/webhooks/${ACCOUNT}`,
    handled: async () => (await (await fetch(`${base}/handled`)).json()) as HandledEvent[],
    close: async () => {
      await stop();
    },
  };
});

describe('Elysia: a route whose body Elysia parsed first', () => {
  const deliver = async (url: string) => {
    const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    const response = await fetch(url, { method: 'POST', headers, body });
    return { status: response.status, body: await response.json() };
  };

  it('answers 500 body_already_parsed saying what to do; parse: none on the route fixes it', async () => {
    const { base, stop } = await startElysia();
    try {
      // The handler names `body`, so Elysia reads the Request before the webhook handler can.
      const parsed = await deliver(`${base}/parsed`);
      expect(parsed.status).toBe(500);
      expect(parsed.body.error.code).toBe('body_already_parsed');
      expect(parsed.body.error.message).toContain('request.clone()');
      // A hook that reads the body does the same to every route of its app…
      const hooked = await deliver(`${base}/hooked/parsed`);
      expect(hooked.body.error.code).toBe('body_already_parsed');
      // …except one that says parse: 'none'.
      const raw = await deliver(`${base}/hooked/raw`);
      expect(raw).toEqual({ status: 200, body: { received: true } });
    } finally {
      await stop();
    }
  }, 60_000);
});
