// Failover measurements for docs/high-availability.md: `node bench/failover.mjs` (no build needed).
// Runs the suite's failover tests (test/stores/failover-*.test.ts: a Sentinel topology, a 3+3 Redis Cluster,
// a PostgreSQL primary with a streaming standby behind a TCP proxy, each started on free ports with this
// machine's redis-server and PostgreSQL binaries) with more events, and with and without the documented
// setting: the primary is SIGKILLed once 40% of the deliveries were acknowledged; each line says how many
// acknowledged events were lost, how many ran twice, how many requests failed and how long the outage lasted.
// BullMQ on Sentinel and on a Cluster (test/durable/failover-bullmq*.test.ts) counts jobs answered 202 that
// never ran.
// The cost cases measure what waitForReplicas costs the store and a BullMQ handoff: 1000 events, 16 at a time,
// on the Sentinel topology, with and without it interleaved in five rounds. The
// pinned case plays a REDIS_URL pinned to the primary: the primary killed, restarted once a replica was promoted
// (Sentinel then demotes it and its resync wipes what it took meanwhile), then every event delivered once more.
// Env: EVENTS (200), COPIES (50), CONCURRENCY (16), ONLY (a substring of the case names).
import { spawnSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';

const EVENTS = process.env.EVENTS ?? '200';
const COPIES = process.env.COPIES ?? '50';
const CONCURRENCY = process.env.CONCURRENCY ?? '16';
const COLORS = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

const cases = [
  ['sentinel, waitForReplicas 1', 'test/stores/failover-sentinel.test.ts', { MW_HA_REPLICAS: '1' }],
  ['sentinel, no waitForReplicas', 'test/stores/failover-sentinel.test.ts', { MW_HA_REPLICAS: '0' }],
  ['cluster, waitForReplicas 1', 'test/stores/failover-cluster.test.ts', { MW_HA_REPLICAS: '1' }],
  ['cluster, no waitForReplicas', 'test/stores/failover-cluster.test.ts', { MW_HA_REPLICAS: '0' }],
  [
    'cluster, ioredis, waitForReplicas 1',
    'test/stores/failover-cluster.test.ts',
    { MW_HA_REPLICAS: '1', MW_HA_IOREDIS: '1' },
  ],
  ['bullmq sentinel, waitForReplicas 1', 'test/durable/failover-bullmq.test.ts', { MW_HA_REPLICAS: '1' }],
  ['bullmq sentinel, no waitForReplicas', 'test/durable/failover-bullmq.test.ts', { MW_HA_REPLICAS: '0' }],
  [
    'bullmq cluster, waitForReplicas 1',
    'test/durable/failover-bullmq-cluster.test.ts',
    { MW_HA_REPLICAS: '1' },
  ],
  [
    'bullmq cluster, no waitForReplicas',
    'test/durable/failover-bullmq-cluster.test.ts',
    { MW_HA_REPLICAS: '0' },
  ],
  ['postgres, synchronous standby', 'test/stores/failover-postgres.test.ts', { MW_HA_SYNC: '1' }],
  ['postgres, asynchronous standby', 'test/stores/failover-postgres.test.ts', { MW_HA_SYNC: '0' }],
  ['sentinel, the cost of waitForReplicas', 'test/stores/failover-sentinel.test.ts', { MW_HA_COST: '1000' }],
  [
    'bullmq sentinel, the cost of waitForReplicas',
    'test/durable/failover-bullmq.test.ts',
    { MW_HA_COST: '1000' },
  ],
  // The old primary restarts once a replica was promoted: the pinned clients write to it until Sentinel demotes it.
  [
    'sentinel, a pinned REDIS_URL',
    'test/stores/failover-sentinel.test.ts',
    { MW_HA_PINNED: '1', MW_HA_DEADLINE_MS: '60000' },
  ],
].filter(([name]) => !process.env.ONLY || name.includes(process.env.ONLY));

console.log(
  `${new Date().toISOString()} Node ${process.version}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, ` +
    `load ${loadavg()[0].toFixed(1)}; ${EVENTS} events + ${COPIES} copies, ${CONCURRENCY} at a time, primary killed at 40%`,
);
for (const [name, file, env] of cases) {
  const started = Date.now();
  const only = env.MW_HA_COST ? 'the cost' : env.MW_HA_PINNED ? 'pinned' : 'SIGKILLed|lost at 40%';
  const result = spawnSync('npx', ['vitest', 'run', file, '-t', only], {
    encoding: 'utf8',
    env: {
      ...process.env,
      MW_HA_EVENTS: EVENTS,
      MW_HA_COPIES: COPIES,
      MW_HA_CONCURRENCY: CONCURRENCY,
      MW_HA_DEADLINE_MS: '240000',
      ...env,
    },
  });
  const output = `${result.stdout}\n${result.stderr}`.replace(COLORS, '');
  const lines = output.split('\n').filter((each) => / lost \d+, run twice|^cost, |^pinned, /.test(each));
  const verdict =
    /Tests\s+\d+ passed/.test(output) && !/Tests\s+\d+ failed/.test(output) ? 'passed' : 'FAILED';
  const took = ((Date.now() - started) / 1000).toFixed(0);
  const found = lines.map((line) => line.trim()).join('; ') || '(no result line)';
  console.log(`${name.padEnd(32)} ${found} [${verdict}, ${took} s]`);
  if (verdict !== 'passed')
    console.log(
      output
        .split('\n')
        .filter((line) => /Error|expected/.test(line))
        .slice(0, 5)
        .join('\n'),
    );
}
