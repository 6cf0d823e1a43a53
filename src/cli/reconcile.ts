import { createMessageTracker } from '../tracker/index.js';
import type { StatusStore } from '../tracker/store.js';
import { BIN, type Command, integer, noPositionals, parse, UsageError } from './args.js';

const help = `Usage: ${BIN} reconcile --store URL --base-url URL [--api-key K] [options]

One reconciliation pass: asks the service's status path about every expected message still open after
--older-than-ms, moves each status through the tracker's rules, and prints the summary. Run it on a schedule
(cron, a worker, a serverless schedule); passes at once in several places run no transition twice.

  --store URL          the status store: postgres://… (table message_status) or redis://… (prefix mw:status:)
  --table NAME         the PostgreSQL status table (default message_status)
  --prefix P           the Redis key prefix (default mw:status:)
  --base-url URL       the service's base address (the emulator's: http://127.0.0.1:4010)
  --api-key K          a test or live API key (or set SERVICE_API_KEY); never printed
  --status-path P      where a message's status is read (default /v1/messages/{id})
  --older-than-ms N    ask only about messages open this long (default 900000)
  --limit N            most messages asked about (default 1000)
  --json               print the summary as JSON`;

export const reconcile: Command = {
  name: 'reconcile',
  summary: 'one reconciliation pass: ask the service about messages still open',
  help,
  async run(argv) {
    const { values, positionals } = parse('reconcile', argv, {
      store: { type: 'string' },
      table: { type: 'string' },
      prefix: { type: 'string' },
      'base-url': { type: 'string' },
      'api-key': { type: 'string' },
      'status-path': { type: 'string' },
      'older-than-ms': { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    });
    noPositionals('reconcile', positionals);
    const apiKey = values['api-key'] ?? process.env.SERVICE_API_KEY;
    if (!values.store || !values['base-url'] || !apiKey)
      throw new UsageError(`reconcile needs --store, --base-url and --api-key (or SERVICE_API_KEY).`);
    const olderThanMs = integer('reconcile', 'older-than-ms', values['older-than-ms'], 900_000, 0, 2 ** 40);
    const limit = integer('reconcile', 'limit', values.limit, 1000, 1, 1_000_000);
    const { createServiceClient } = await import('../tracker/service-client.js');
    const client = createServiceClient({
      baseUrl: values['base-url'],
      apiKey,
      ...(values['status-path'] ? { statusPath: values['status-path'] } : {}),
    });
    const { store, close } = await openStore(values.store, values.table, values.prefix);
    try {
      const tracker = createMessageTracker({ store });
      const summary = await tracker.reconcile({ client, olderThanMs, limit });
      const text = values.json
        ? JSON.stringify(summary)
        : `checked ${summary.checked}, moved ${summary.moved}, still open ${summary.stillOpen}, unknown ${summary.unknown}, failed ${summary.failed}`;
      process.stdout.write(`${text}\n`);
      return summary.failed > 0 ? 1 : 0;
    } finally {
      await close();
    }
  },
};

async function openStore(
  url: string,
  table: string | undefined,
  prefix: string | undefined,
): Promise<{ store: StatusStore; close: () => Promise<void> }> {
  if (/^postgres(ql)?:/.test(url)) {
    const { default: pg } = await import('pg');
    const { PostgresStatusStore } = await import('../tracker/postgres-store.js');
    const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 3000 });
    pool.on('error', () => {});
    const store = new PostgresStatusStore({ pool, ...(table ? { table } : {}) });
    await store.migrate();
    return { store, close: () => pool.end() };
  }
  if (/^rediss?:/.test(url)) {
    const { createClient } = await import('redis');
    const { RedisStatusStore } = await import('../tracker/redis-store.js');
    const client = createClient({ url });
    client.on('error', () => {});
    await client.connect();
    const store = new RedisStatusStore({ client, ...(prefix ? { prefix } : {}) });
    return { store, close: async () => client.destroy() };
  }
  throw new UsageError('reconcile --store takes a postgres:// or a redis:// URL.');
}
