import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformanceSuite } from '../adapters/conformance.js';
import { ACCOUNT, CONFORMANCE_PROFILES } from '../adapters/conformance-receiver.js';
import {
  buildNext,
  conformanceEnv,
  exampleRoute,
  type NextApp,
  type StartedNext,
  startNext,
} from '../adapters/next-server.js';
import { root } from '../support/build.js';
import { type CachedConsumer, cachedConsumer } from '../support/cached-consumer.js';

/**
 * The example app (examples/next-app: an App Router route and a Pages Router route on one receiver) in an app
 * of its own on each older Next.js major the peer range admits, with the packed package installed by a plain
 * `npm install`: built with `next build`, started with `next start`, and put through the adapter conformance
 * suite over a real socket, as test/adapters/next.test.ts does on the current major.
 *
 * CI runs the whole suite three times, once per Node line; these run on the first run only (CI sets
 * CI_REPEAT_RUN=1 on the others): the adapter's code path is the same on every line, the current major runs on
 * every line, and each build costs about a minute.
 */
const majors = [
  { major: 13, next: '13.4.19', react: '18.3.1' },
  { major: 14, next: '14.2.35', react: '18.3.1' },
  { major: 15, next: '15.5.29', react: '19.3.1' },
];
const repeatRun = process.env.CI_REPEAT_RUN === '1';

const { WEBHOOK_SECRET: _outerSecret, ...outerEnv } = process.env;
const buildEnv = { ...outerEnv, NEXT_TELEMETRY_DISABLED: '1' };
// The example's receiver verifies the default profile only (it is configured from its environment).
const defaultOnly = { profiles: CONFORMANCE_PROFILES.slice(0, 1) };

for (const { major, next, react } of majors) {
  describe.skipIf(repeatRun)(`an app on Next.js ${major} (${next}, React ${react})`, () => {
    let consumer: CachedConsumer;
    let started: StartedNext | undefined;
    beforeAll(async () => {
      consumer = await cachedConsumer(`next${major}`, { next, react, 'react-dom': react });
      const example = join(root, 'examples/next-app');
      for (const part of ['app', 'pages', 'lib', '.next'])
        rmSync(join(consumer.dir, part), { recursive: true, force: true });
      for (const part of ['app', 'pages', 'lib']) {
        cpSync(join(example, part), join(consumer.dir, part), { recursive: true });
      }
      const own = join(root, 'test/consumers/next-majors');
      cpSync(join(own, 'next.config.mjs'), join(consumer.dir, 'next.config.mjs'));
      cpSync(join(own, 'webhooks-pages-events.js'), join(consumer.dir, 'pages/api/webhooks-pages-events.js'));
      writeFileSync(join(consumer.dir, 'jsconfig.json'), '{}');
      const app: NextApp = {
        cwd: consumer.dir,
        next: join(consumer.dir, 'node_modules/next/dist/bin/next'),
        app: '.',
      };
      await buildNext(app, buildEnv);
      started = await startNext(app, conformanceEnv(buildEnv));
    }, 600_000);
    afterAll(() => started?.stop());

    it('installed the package without peer conflicts (when this run installed it)', async () => {
      expect(consumer.installOutput).not.toMatch(/ERESOLVE|peer dep|EBADENGINE/i);
      const { version } = (await import(join(consumer.dir, 'node_modules/next/package.json'), {
        with: { type: 'json' },
      })) as { default: { version: string } };
      expect(version).toBe(next);
    });

    const base = () => started?.base ?? '';
    // Next.js drops a route handler's Content-Length and streams its answer chunked, as the current major does.
    runConformanceSuite(
      `next.js ${major} app router (next start)`,
      exampleRoute(base, `/api/webhooks/${ACCOUNT}`),
      {
        ...defaultOnly,
        // Next.js 13.4 hands the route compressed bytes without their Content-Encoding header: 401, not 415.
        skip: ['sized_answers', 'route_params', ...(major === 13 ? ['compressed_body'] : [])],
      },
    );
    runConformanceSuite(
      `next.js ${major} pages router (next start, bodyParser: false)`,
      // Next 13.4 serves its two routers from separate processes, each with its own receiver: its Pages route's
      // deliveries are listed by a Pages route. Later majors share one process: the App Router's list has them.
      exampleRoute(
        base,
        `/api/webhooks-pages/${ACCOUNT}`,
        major === 13 ? '/api/webhooks-pages-events' : undefined,
      ),
      { ...defaultOnly, skip: ['route_params', ...(major === 13 ? ['compressed_body'] : [])] },
    );
  });
}
