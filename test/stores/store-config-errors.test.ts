import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createFetchHandler } from '../../adapters/fetch.js';
import { WebhookConfigError } from '../../src/base/errors.js';
import { createReceiver } from '../../src/index.js';
import { failOpen } from '../../src/stores/fail-open.js';
import { MemoryDedupeStore } from '../../src/stores/memory.js';
import { PostgresDedupeStore } from '../../src/stores/postgres.js';
import { RedisDedupeStore } from '../../src/stores/redis.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { DATABASE_URL } from '../support/harness/cluster.js';

/*
 * A store built wrongly is a configuration mistake: a WebhookConfigError naming the option, which the adapters
 * show in their 500 receiver_misconfigured answer (any other error is shown only on the server).
 */
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
pool.on('error', () => {});
afterAll(() => pool.end());

function configError(build: () => unknown, option: RegExp): void {
  let thrown: unknown;
  try {
    build();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(WebhookConfigError);
  expect((thrown as Error).message).toMatch(option);
}

describe('store configuration errors', () => {
  it('RedisDedupeStore: a missing client, or one that is not a Redis client, names client', () => {
    const build = (options: unknown) => () =>
      new RedisDedupeStore(options as ConstructorParameters<typeof RedisDedupeStore>[0]);
    configError(build(undefined), /\{ client \}\).*createClient\(\).*got undefined/);
    configError(build({}), /\{ client \}\).*got undefined/);
    configError(build({ client: 'redis://127.0.0.1:6379' }), /\{ client \}\).*got a string/);
    configError(build({ client: createClient }), /\{ client \}\).*got a function/);
    configError(build({ client: pool }), /\{ client \}\).*got an instance of BoundPool/);
  });

  it('RedisDedupeStore: a prefix that is not a string, a bad operationTimeoutMs', () => {
    const client = createClient();
    configError(
      () => new RedisDedupeStore({ client, prefix: 7 as unknown as string }),
      /\{ prefix \}\): prefix must be a string, got 7\./,
    );
    configError(
      () => new RedisDedupeStore({ client, operationTimeoutMs: '3000' as unknown as number }),
      /RedisDedupeStore\(\{ operationTimeoutMs \}\).*got "3000"/,
    );
  });

  it('PostgresDedupeStore: no pool, a Client instead of a Pool, bad names, a bad operationTimeoutMs', () => {
    const build = (options: unknown) => () =>
      new PostgresDedupeStore(options as ConstructorParameters<typeof PostgresDedupeStore>[0]);
    configError(build(undefined), /\{ pool \}\) needs pool.*got undefined/);
    configError(build({ pool: 'postgres://localhost/test' }), /\{ pool \}\) needs pool.*got a string/);
    configError(build({ pool: new pg.Client(DATABASE_URL) }), /\{ pool \}\) got .*pg Client.*new pg\.Pool/);
    configError(build({ pool, table: 'inbox; DROP TABLE users' }), /\{ table \}\).*letters, digits/);
    configError(build({ pool, schema: 'public.x' }), /\{ schema \}\).*"public\.x"/);
    configError(build({ pool, operationTimeoutMs: 0 }), /\{ operationTimeoutMs \}\).*got 0/);
  });

  it('MemoryDedupeStore maxEntries and failOpen over a transactional store', () => {
    configError(() => new MemoryDedupeStore({ maxEntries: 0 }), /\{ maxEntries \}\).*got 0/);
    const transactional = new PostgresDedupeStore({ pool, transactional: true });
    configError(() => failOpen(transactional as never), /failOpen\(store\).*transactional: true/);
  });

  it('an adapter answers 500 receiver_misconfigured with the message naming the option', async () => {
    // The adapter prints the reason on the server too; this test reads it from the answer.
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
    const handle = createFetchHandler(() =>
      createReceiver({
        secrets: 'whsec_config',
        store: new RedisDedupeStore({ client: undefined as never }),
      }),
    );
    const signed = createSignedRequest(createEvent('message.delivered'), { secret: 'whsec_config' });
    const response = await handle(
      new Request('http://localhost/webhooks', {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
      }),
    );
    expect(response.status).toBe(500);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('receiver_misconfigured');
    expect(error.message).toContain('new RedisDedupeStore({ client }) needs client');
    expect(printed).toHaveBeenCalledOnce();
    printed.mockRestore();
  });
});
