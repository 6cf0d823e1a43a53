import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { SECRET, start } from '../support/child-processes.js';
import { buildPackage } from '../support/harness/build.js';
import { REDIS_URL } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { roundRobin } from '../support/round-robin.js';
import { drive, expectRecordShowsRetries } from './drive.js';

/*
 * The emulator drives real receivers end to end: first the Express example as shipped (memory store), then
 * two receiver processes sharing a Redis store behind a round-robin balancer. Every delivered and every
 * failed message's event must reach a handler exactly once, through copies, reordering and retries.
 */
const run = randomUUID().slice(0, 8);
const prefix = `mw-test:emu-${run}:`;
const redis = createClient({ url: REDIS_URL });
redis.on('error', () => {});

beforeAll(async () => {
  await Promise.all([ensureBuilt(), buildPackage()]);
  await redis.connect();
});

afterAll(async () => {
  await deleteKeys(redis, `${prefix}*`);
  redis.destroy();
});

it('drives examples/express: every event handled exactly once, retries on record', async () => {
  const example = start([process.execPath, 'examples/express/server.mjs'], {
    PORT: '0',
    WEBHOOK_SECRET: SECRET,
  });
  const handled = new Map<string, number>();
  let expected = Number.POSITIVE_INFINITY;
  let allHandled: () => void = () => {};
  const logged = new Promise<void>((resolve) => {
    allHandled = resolve;
  });
  example.child.stdout?.on('data', (chunk: Buffer) => {
    for (const [, id] of String(chunk).matchAll(/\] message\.(?:delivered|failed) (evt_\w+):/g)) {
      handled.set(id as string, (handled.get(id as string) ?? 0) + 1);
    }
    if (handled.size >= expected) allHandled();
  });
  try {
    const [url] = await example.waitFor(/http:\/\/localhost:\d+\/webhooks/);
    const result = await drive(url.replace('localhost', '127.0.0.1'), SECRET);
    try {
      expectRecordShowsRetries(result);
      // Each handler logged before its answer went out; the lines come through a pipe on its own schedule.
      expected = result.eventIds.length;
      if (handled.size >= expected) allHandled();
      await logged;
      expect(new Set(handled.keys())).toEqual(new Set(result.eventIds));
      expect([...handled.values()].filter((count) => count !== 1)).toEqual([]);
    } finally {
      await result.emulator.close();
    }
  } finally {
    await example.stop();
  }
}, 60_000);

it('drives an instance pair on Redis: every event handled exactly once, retries on record', async () => {
  const dist = await buildPackage();
  const instances = await Promise.all(
    [0, 1].map(() => startInstance({ dist, secret: SECRET, redisUrl: REDIS_URL, prefix })),
  );
  const balancer = await roundRobin(instances.map((instance) => instance.url));
  try {
    const result = await drive(balancer.url, SECRET);
    try {
      const reasons = expectRecordShowsRetries(result);
      const counts = await redis.mGet(result.eventIds.map((id) => `${prefix}count:${id}`));
      expect(counts.filter((count) => count !== '1')).toEqual([]);
      // Copies met on the two instances at once: the second was told to come back, and did.
      expect(Object.keys(reasons).some((label) => label.startsWith('409'))).toBe(true);
    } finally {
      await result.emulator.close();
    }
  } finally {
    await balancer.close();
    await Promise.all(instances.map((instance) => instance.stop()));
  }
}, 60_000);

const FIXTURE = fileURLToPath(new URL('fixtures/redis-receiver.mjs', import.meta.url));

async function startInstance(
  config: Record<string, string>,
): Promise<{ url: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, MW_CONFIG: JSON.stringify(config) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) =>
      resolve(JSON.parse(line).port),
    );
    child.once('exit', (code) =>
      reject(new Error(`The receiver process exited (${code}) before listening.`)),
    );
  });
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
