import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookConfigError } from '../../src/base/errors.js';
import { DurableObjectDedupeStore } from '../../src/stores/cloudflare.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { root } from '../support/build.js';
import { storeAcrossInstances } from '../support/store-bridge.js';
import { until } from '../support/until.js';
import { describeStoreConformance } from './store-conformance.js';

/*
 * DurableObjectDedupeStore inside workerd (through Miniflare): the test Worker is loaded twice, as two Workers,
 * each its own isolate, both bound to the same DedupeDurableObject class. Every store operation the suite
 * makes runs inside a Worker, through its own store instance, and the suite's calls alternate between the two
 * isolates, so a claim made in one is settled, renewed or found in flight from the other.
 */

const SECRET = 'whsec_cloudflare_store_tests';
const ISOLATES = ['isolate-a', 'isolate-b'] as const;
let mf: Miniflare;
let workers: Record<(typeof ISOLATES)[number], { fetch(url: string, init?: RequestInit): Promise<Response> }>;

beforeAll(async () => {
  const { outputFiles } = await build({
    entryPoints: [join(root, 'test/stores/cloudflare/worker.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    write: false,
    logLevel: 'silent',
  });
  const script = outputFiles[0]?.text as string;
  const objects = (scriptName?: string) => ({
    DEDUPE: { className: 'PeekableDedupeObject', useSQLite: true, ...(scriptName ? { scriptName } : {}) },
    SILENT: { className: 'SilentObject', useSQLite: true, ...(scriptName ? { scriptName } : {}) },
  });
  mf = new Miniflare({
    workers: ISOLATES.map((name, i) => ({
      name,
      modules: true,
      script,
      // The newest date the installed workerd binary supports.
      compatibilityDate: '2026-05-03',
      bindings: { SECRET },
      durableObjects: objects(i === 0 ? undefined : ISOLATES[0]),
    })),
  });
  await mf.ready;
  workers = {
    'isolate-a': (await mf.getWorker('isolate-a')) as never,
    'isolate-b': (await mf.getWorker('isolate-b')) as never,
  };
}, 60_000);

afterAll(() => mf?.dispose());

/** The store as the test process sees it: each operation runs inside a Worker, in turn in either isolate. */
const storeInWorkers = (query: Record<string, string> = {}) =>
  storeAcrossInstances(
    ISOLATES.map((name) => (path: string) => workers[name].fetch(`http://worker${path}`)),
    query,
  );

describeStoreConformance('Durable Object (workerd, two isolates)', () => ({
  store: storeInWorkers(),
  leaseMs: 200,
  slackMs: 60,
  advance: sleep,
}));

describe('DurableObjectDedupeStore', () => {
  it('processes an event once when its copies reach two isolates at once', async () => {
    const event = createEvent('message.delivered');
    const { body, headers } = createSignedRequest(event, { secret: SECRET });
    const deliver = (i: number) =>
      workers[ISOLATES[i % 2] as (typeof ISOLATES)[number]].fetch('http://worker/webhooks', {
        method: 'POST',
        headers,
        body,
      });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => deliver(i)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    const handled = await Promise.all(
      ISOLATES.map(
        async (name) => (await (await workers[name].fetch('http://worker/handled')).json()) as string[],
      ),
    );
    expect(handled.flat().filter((id) => id === event.id)).toHaveLength(1);
    // A later copy, in either isolate, is a duplicate.
    for (const i of [0, 1]) {
      expect(await (await deliver(i)).json()).toEqual({ received: true, duplicate: true });
    }
  });

  it("deletes a key's storage once its retention, or an unsettled lease, is over (the object's alarm)", async () => {
    const store = storeInWorkers();
    const stored = async (key: string) =>
      (
        (await (await workers['isolate-a'].fetch(`http://worker/peek?key=${key}`)).json()) as {
          record: unknown;
        }
      ).record;
    const completed = `live:evt_retention_${Date.now()}`;
    const token = ((await store.claim(completed, 60_000)) as { token: string }).token;
    expect(await store.complete(completed, token, 300)).toBe(true);
    expect(await stored(completed)).toMatchObject({ done: true });
    const abandoned = `live:evt_abandoned_${Date.now()}`;
    expect((await store.claim(abandoned, 200)).status).toBe('claimed');
    expect(await stored(abandoned)).toMatchObject({ token: expect.any(String) });
    await until(async () => (await stored(completed)) === null && (await stored(abandoned)) === null, {
      what: 'the alarms to delete both records',
    });
  });

  it('rejects an operation past operationTimeoutMs, naming the store', async () => {
    const store = storeInWorkers({ object: 'silent', timeout: '300' });
    const started = performance.now();
    const error = await store.claim('live:evt_silent', 1000).then(
      () => new Error('the claim resolved'),
      (failure: Error) => failure,
    );
    expect(error.name).toBe('StoreTimeoutError');
    expect(error.message).toMatch(
      /^The Durable Object store did not answer within 300 ms \(operationTimeoutMs\)/,
    );
    expect(performance.now() - started).toBeLessThan(300 + 1500);
  });

  it('refuses a namespace that is not a Durable Object binding, naming what it got', () => {
    expect(() => new DurableObjectDedupeStore({ namespace: undefined as never })).toThrow(WebhookConfigError);
    expect(() => new DurableObjectDedupeStore({ namespace: {} as never })).toThrow(/got a plain object/);
  });
});
