import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Consumer, DEPENDENCIES, installPackedPackage } from '../support/packed-package.js';
import { tsc } from '../support/tsc.js';

/**
 * An app that installed the package and none of its optional peers (fastify, express, next, redis, pg,
 * mysql2, knex, kysely, prom-client, @opentelemetry/api). The peers are the app's own objects passed in (its server, its client), so every entry
 * point loads without them; only the types need the peer, and then the compiler names it in one line. The NestJS
 * module is the exception: Nest's decorators build it, so it loads only in an app that has Nest; so is
 * `/drizzle-schema`, Drizzle table definitions for an app that has Drizzle (`/drizzle` itself loads without it).
 */
const entries = [
  '',
  '/testing',
  '/tracker',
  '/express',
  '/fastify',
  '/koa',
  '/next',
  '/fetch',
  '/node',
  '/aws-lambda',
  '/google-cloud-functions',
  '/azure-functions',
  '/redis',
  '/postgres',
  '/mysql',
  '/knex',
  '/kysely',
  '/drizzle',
  '/prisma',
  '/typeorm',
  '/prometheus',
  '/opentelemetry',
  '/rabbitmq',
  '/nats',
];
const typedPeers: Record<string, string> = {
  '/express': 'express',
  '/fastify': 'fastify',
  '/nestjs': '@nestjs/common',
  '/postgres': 'pg',
  '/mysql': 'mysql2/promise',
  '/knex': 'knex',
  '/kysely': 'kysely',
  '/typeorm': 'typeorm',
  '/prometheus': 'prom-client',
  '/opentelemetry': '@opentelemetry/api',
  '/rabbitmq': 'amqplib',
  '/nats': '@nats-io/transport-node',
};

let consumer: Consumer;
beforeAll(async () => {
  consumer = await installPackedPackage({ only: DEPENDENCIES });
}, 180_000);
afterAll(() => consumer?.remove());

describe('without the optional peers', () => {
  it('loads every entry point at run time', () => {
    const script = entries.map((entry) => `await import('messaging-webhooks${entry}');`).join('\n');
    const output = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', `${script}\nconsole.log('loaded');`],
      {
        cwd: consumer.dir,
        encoding: 'utf8',
      },
    );
    expect(output.trim()).toBe('loaded');
  });

  it('fails type-checking with one line per missing peer, naming the package to install', async () => {
    const files = Object.keys(typedPeers).map((entry) => {
      const file = `uses-${entry.slice(1)}.ts`;
      writeFileSync(join(consumer.dir, file), `export * from 'messaging-webhooks${entry}';\n`);
      return file;
    });
    writeFileSync(
      join(consumer.dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: [] },
        files,
      }),
    );
    const { code, output } = await tsc(consumer.dir);
    expect(code).not.toBe(0);
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(Object.keys(typedPeers).length);
    for (const peer of Object.values(typedPeers)) {
      expect(lines.filter((line) => line.includes(`Cannot find module '${peer}'`))).toHaveLength(1);
    }
  }, 120_000);
});
