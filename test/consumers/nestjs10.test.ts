import { spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Receiver, SignatureProfile } from '../../src/index.js';
import {
  type ConformanceOptions,
  type ConformanceServer,
  runConformanceSuite,
} from '../adapters/conformance.js';
import { ACCOUNT, createConformanceOptions, recordHandledEvents } from '../adapters/conformance-handlers.js';
import { conformanceSecrets } from '../adapters/conformance-receiver.js';
import { root } from '../support/build.js';
import { type CachedConsumer, cachedConsumer } from '../support/cached-consumer.js';

/**
 * An app on NestJS 10, in a folder of its own: Nest 10 and 11 cannot share one node_modules (each
 * @nestjs/platform-* asks for its own major of @nestjs/common and @nestjs/core by name, so npm cannot place
 * aliased Nest 10 packages next to the repository's Nest 11), so the app installs @nestjs/*@10 and the packed
 * package with a plain `npm install`. The adapter conformance suite then runs against it on both platforms, the
 * app's module imported from its folder so that Nest and the package resolve from the app's node_modules.
 */
const NEST = '10.4.9';
let consumer: CachedConsumer;
let app: {
  nestVersion: string;
  startNest10(options: {
    platform: 'express' | 'fastify';
    appOptions: object;
    receiverOptions: object;
    record(receiver: Receiver): unknown;
    account: string;
  }): Promise<ConformanceServer>;
};

beforeAll(async () => {
  consumer = await cachedConsumer('nestjs10', {
    '@nestjs/common': NEST,
    '@nestjs/core': NEST,
    '@nestjs/platform-express': NEST,
    '@nestjs/platform-fastify': NEST,
    'reflect-metadata': '^0.2.0',
    rxjs: '^7.8.0',
  });
  for (const file of ['app.mjs', 'conformance-app.mjs']) {
    copyFileSync(join(root, 'test/consumers/nestjs10', file), join(consumer.dir, file));
  }
  app = await import(pathToFileURL(join(consumer.dir, 'conformance-app.mjs')).href);
}, 600_000);

describe('an app on NestJS 10 (Express platform)', () => {
  it('installs the package without peer conflicts, handles a delivery, and names rawBody: true without it', () => {
    expect(consumer.installOutput).not.toMatch(/ERESOLVE|peer dep/i);
    const run = spawnSync(process.execPath, ['app.mjs'], {
      cwd: consumer.dir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    const seen = JSON.parse(run.stdout);
    expect(seen.nestVersion).toBe(NEST);
    expect(seen.withRawBody).toEqual({ status: 200, body: { received: true }, handled: true });
    expect(seen.withoutRawBody.status).toBe(500);
    expect(seen.withoutRawBody.body.error.code).toBe('body_already_parsed');
    expect(seen.withoutRawBody.body.error.message).toContain(
      'NestFactory.create(AppModule, { rawBody: true })',
    );
    expect(seen.withoutRawBody.handled).toBe(false);
  });

  it('runs the conformance suite on Nest 10 itself', () => {
    expect(app.nestVersion).toBe(NEST);
  });
});

function conformanceApp(platform: 'express' | 'fastify', appOptions: object) {
  return (profile: SignatureProfile) =>
    app.startNest10({
      platform,
      appOptions,
      receiverOptions: { ...createConformanceOptions(conformanceSecrets(profile)), profile },
      record: recordHandledEvents,
      account: ACCOUNT,
    });
}

// The same skips as on Nest 11: Nest's JSON parser (Express) answers bodies it cannot parse or that pass its
// 100 kB limit before the route runs, and Nest 10's body-parser 1 refuses a br body itself (415 in Nest's shape);
// Fastify also answers a content type it has no parser for, and a compressed body.
const expressParser: ConformanceOptions = {
  skip: ['compressed_body', 'invalid_json', 'payload_too_large_declared', 'payload_too_large_chunked'],
};
const fastifyParser: ConformanceOptions = {
  skip: [
    'unsupported_media_type',
    'compressed_body',
    'invalid_json',
    'payload_too_large_declared',
    'payload_too_large_chunked',
  ],
};
runConformanceSuite(
  'nestjs 10 on express, rawBody: true',
  conformanceApp('express', { rawBody: true }),
  expressParser,
);
runConformanceSuite(
  'nestjs 10 on express, bodyParser: false',
  conformanceApp('express', { bodyParser: false }),
);
runConformanceSuite(
  'nestjs 10 on fastify, rawBody: true',
  conformanceApp('fastify', { rawBody: true }),
  fastifyParser,
);
