import pg from 'pg';
import { afterAll } from 'vitest';
import {
  createPgBossWorker,
  type PgBossDurableQueue,
  pgBossDeadLetters,
  pgBossQueue,
} from '../../src/durable/pg-boss/index.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { describeDeadLetters } from './dead-letters-conformance.js';

const { run } = testRun();
const schema = `mw_dl_${run}`;
let queues = 0;

describeDeadLetters<PgBossDurableQueue>('pg-boss', {
  queue: (attempts) =>
    pgBossQueue({ connectionString: DATABASE_URL, schema, name: `dl${++queues}`, attempts, backoffMs: 1000 }),
  worker: (receiver, queue) =>
    createPgBossWorker({ receiver, queue, concurrency: 4, pollingIntervalSeconds: 0.5 }),
  deadLetters: (queue) => pgBossDeadLetters({ queue }),
  unreachable: () =>
    pgBossDeadLetters({ connectionString: 'postgres://postgres@127.0.0.1:1/test', schema, deadlineMs: 2000 }),
});

afterAll(async () => {
  const client = new pg.Client(DATABASE_URL);
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});
