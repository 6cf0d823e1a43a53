import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from '../support/build.js';
import { type Consumer, DEPENDENCIES, installPackedPackage } from '../support/packed-package.js';
import { tsc } from '../support/tsc.js';

/**
 * The package's types as its users compile them: each project below gets the packed tarball and only the
 * packages its kind of app would install, and compiles with skipLibCheck off, so every .d.ts the package
 * ships is checked against what that app has (no @types/express, or no Node types at all).
 */
const projects = [
  { name: 'no-express', packages: ['fastify'] },
  { name: 'workers', packages: [] },
  // A worker on pg-boss: pg-boss's own declarations do not compile with skipLibCheck off, and ours must not
  // pull them in (the project never imports pg-boss's types itself except through `new PgBoss`).
  { name: 'pg-boss', packages: ['@types/node', 'pg-boss', 'pg', '@types/pg'] },
  {
    name: 'node',
    packages: [
      '@types/node',
      '@types/express',
      '@types/pg',
      'express',
      'fastify',
      'next',
      'pg',
      'prom-client',
      '@opentelemetry/api',
      'redis',
      '@redis/client',
      'react',
    ],
  },
];

const consumers: Consumer[] = [];
afterAll(() => {
  for (const consumer of consumers) consumer.remove();
});

describe.each(projects)('consumer project $name (skipLibCheck: false)', ({ name, packages }) => {
  it('compiles against the packed package', async () => {
    const consumer = await installPackedPackage({ only: [...DEPENDENCIES, ...packages] });
    consumers.push(consumer);
    const source = join(root, 'test/consumers', name);
    for (const file of readdirSync(source)) copyFileSync(join(source, file), join(consumer.dir, file));
    const { code, output } = await tsc(consumer.dir);
    expect(output).toBe('');
    expect(code).toBe(0);
  }, 120_000);
});
