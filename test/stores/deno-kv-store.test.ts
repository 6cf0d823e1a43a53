import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookConfigError } from '../../src/base/errors.js';
import { createReceiver } from '../../src/index.js';
import { DenoKvDedupeStore } from '../../src/stores/deno-kv.js';
import { root } from '../support/build.js';
import { type Running, start } from '../support/child-processes.js';
import { type InstanceFetch, storeAcrossInstances } from '../support/store-bridge.js';
import { deliveredEvent, delivery, expectAccepted, SECRET } from '../support/unit.js';
import { describeStoreConformance } from './store-conformance.js';

/*
 * DenoKvDedupeStore in real Deno, on a local Deno KV database: a Deno process serves the store's operations to
 * this one, each request on a store of its own, so concurrent claims meet only in the database's checked
 * commits. (Deno KV's local SQLite backend is one process's: a second connection to the file fails
 * concurrent writes with "database is locked", so instances sharing a database are Deno Deploy's case.)
 */

const dir = mkdtempSync(join(tmpdir(), 'mw-deno-kv-'));
let deno: Running | undefined;
let inDeno: InstanceFetch;

beforeAll(async () => {
  const server = join(dir, 'server.mjs');
  await build({
    entryPoints: [join(root, 'test/stores/deno-kv/server.ts')],
    outfile: server,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    logLevel: 'silent',
  });
  deno = start([
    join(root, 'node_modules/.bin/deno'),
    'run',
    '--quiet',
    '--no-lock',
    '--unstable-kv',
    `--allow-read=${dir}`,
    `--allow-write=${dir}`,
    '--allow-net=127.0.0.1',
    server,
    join(dir, 'dedupe.sqlite'),
  ]);
  const [, base] = await deno.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
  inDeno = (path) => fetch(`${base}${path}`);
}, 90_000);

afterAll(async () => {
  await deno?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describeStoreConformance('Deno KV (in Deno, a store per request)', () => ({
  store: storeAcrossInstances([(path) => inDeno(path)]),
  leaseMs: 200,
  slackMs: 60,
  advance: sleep,
}));

describe('DenoKvDedupeStore', () => {
  it('gives a key to one of twenty claims that read it before any of them wrote', async () => {
    for (let round = 0; round < 3; round++) {
      const statuses = (await (
        await inDeno(`/race?key=live:evt_race_${round}_${Date.now()}`)
      ).json()) as string[];
      expect(statuses.filter((status) => status === 'claimed')).toHaveLength(1);
      expect(statuses.filter((status) => status === 'in_flight')).toHaveLength(19);
    }
  });

  it('holds the events of the longest tenants a receiver accepts, within its 2 KiB key limit', async () => {
    const receiver = createReceiver({
      tenant: (request) => request.params.account,
      secrets: () => SECRET,
      store: storeAcrossInstances([(path) => inDeno(path)]),
    });
    let runs = 0;
    receiver.on('message.delivered', () => {
      runs++;
    });
    const event = deliveredEvent();
    // 230 characters of a non-Latin script: 2,070 characters URI-encoded.
    for (const account of ['ж'.repeat(230), '\u{1F600}'.repeat(128), `${'ж'.repeat(229)}\ud800`]) {
      const request = { ...delivery(event), params: { account } };
      expectAccepted(await receiver.receive(request));
      expectAccepted(await receiver.receive(request), 200, true);
    }
    expect(runs).toBe(3);
  });

  it("takes Deno's own Deno.Kv, as deno check sees the store's types", () => {
    const file = join(dir, 'typed.ts');
    writeFileSync(
      file,
      [
        '/// <reference lib="deno.ns" />',
        '/// <reference lib="deno.unstable" />',
        `import { DenoKvDedupeStore } from '${join(root, 'src/stores/deno-kv.ts')}';`,
        'export const store = new DenoKvDedupeStore({ kv: await Deno.openKv() });',
      ].join('\n'),
    );
    // The package's own dependencies (zod) resolve from its node_modules, as they would in an app that installed it.
    const flags = [
      '--quiet',
      '--no-lock',
      '--node-modules-dir=manual',
      '--unstable-kv',
      '--unstable-sloppy-imports',
    ];
    const check = spawnSync(join(root, 'node_modules/.bin/deno'), ['check', ...flags, file], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(check.status, `${check.stdout}${check.stderr}`).toBe(0);
  });

  it('refuses what is not a Deno KV database, and a prefix that is not a string, naming what it got', () => {
    expect(() => new DenoKvDedupeStore({ kv: undefined as never })).toThrow(WebhookConfigError);
    expect(() => new DenoKvDedupeStore({ kv: {} as never })).toThrow(/Deno\.openKv\(\).*got a plain object/);
    const kv = { get: async () => ({ value: null, versionstamp: null }), atomic: () => ({}) as never };
    expect(() => new DenoKvDedupeStore({ kv, prefix: 7 as never })).toThrow(
      /prefix must be a string, got a number/,
    );
  });
});
