import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { PostgresStatusStore } from '../../src/tracker/postgres-store.js';
import { createMessageTracker } from '../../src/tracker/tracker.js';
import { ensureBuilt } from '../support/build.js';
import { runCli } from '../support/child-processes.js';
import { DATABASE_URL } from '../support/harness/cluster.js';
import { until } from '../support/until.js';

const table = `mw_status_cli_${randomUUID().replaceAll('-', '').slice(0, 10)}`;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
pool.on('error', () => {});
let emulator: Emulator;

beforeAll(async () => {
  await ensureBuilt();
  // No endpoint: no receipt is ever sent, so only reconciliation can tell the tracker.
  emulator = await startEmulator({ schedule: { submitMs: 5, resultMs: 5, jitterMs: 0 } });
}, 180_000);

afterAll(async () => {
  await emulator.close();
  await pool.query(`DROP TABLE IF EXISTS "${table}"`);
  await pool.end();
});

describe('messaging-webhooks reconcile', () => {
  it('runs one pass against a PostgreSQL status store and prints the summary', async () => {
    const store = new PostgresStatusStore({ pool, table });
    await store.migrate();
    const tracker = createMessageTracker({ store });
    const key = emulator.modes.test.keys[0] as string;
    const sent = await fetch(`${emulator.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to: '+15550100001', sender: 'Acme', body: 'Hello' }),
    });
    const { id } = (await sent.json()) as { id: string };
    await tracker.expect(id);
    await until(() => ['delivered', 'failed'].includes(emulator.state.messages.get(id)?.status ?? ''));
    const args = ['reconcile', '--store', DATABASE_URL, '--table', table, '--base-url', emulator.url];
    const result = await runCli([...args, '--older-than-ms', '0', '--json'], {
      env: { SERVICE_API_KEY: key },
    });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ checked: 1, moved: 1, stillOpen: 0, unknown: 0, failed: 0 });
    expect((await tracker.status(id))?.status).toBe(emulator.state.messages.get(id)?.status);
    expect(result.stdout).not.toContain(key);
  });

  it('says what it needs when an option is missing', async () => {
    const result = await runCli(['reconcile', '--store', DATABASE_URL]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('reconcile needs --store, --base-url and --api-key');
  });
});
