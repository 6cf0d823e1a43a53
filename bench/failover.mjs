// Failover measurements for docs/high-availability.md: `node bench/failover.mjs` (no build needed).
// Runs the suite's failover tests (test/stores/failover-*.test.ts: a Sentinel topology, a 3+3 Redis Cluster,
// a PostgreSQL primary with a streaming standby behind a TCP proxy, each started on free ports with this
// machine's redis-server and PostgreSQL binaries) with more events, and with and without the documented
// setting: the primary is SIGKILLed once 40% of the deliveries were acknowledged; each line says how many
// acknowledged events were lost, how many ran twice, how many requests failed and how long the outage lasted.
// Env: EVENTS (1000), COPIES (250), CONCURRENCY (32), ONLY (a substring of the case names).
import { spawnSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';

const EVENTS = process.env.EVENTS ?? '1000';
const COPIES = process.env.COPIES ?? '250';
const CONCURRENCY = process.env.CONCURRENCY ?? '32';
const COLORS = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

const cases = [
  ['sentinel, waitForReplicas 1', 'test/stores/failover-sentinel.test.ts', { MW_HA_REPLICAS: '1' }],
  ['sentinel, no waitForReplicas', 'test/stores/failover-sentinel.test.ts', { MW_HA_REPLICAS: '0' }],
  ['cluster, waitForReplicas 1', 'test/stores/failover-cluster.test.ts', { MW_HA_REPLICAS: '1' }],
  ['cluster, no waitForReplicas', 'test/stores/failover-cluster.test.ts', { MW_HA_REPLICAS: '0' }],
  ['postgres, synchronous standby', 'test/stores/failover-postgres.test.ts', { MW_HA_SYNC: '1' }],
  ['postgres, asynchronous standby', 'test/stores/failover-postgres.test.ts', { MW_HA_SYNC: '0' }],
].filter(([name]) => !process.env.ONLY || name.includes(process.env.ONLY));

console.log(
  `${new Date().toISOString()} Node ${process.version}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, ` +
    `load ${loadavg()[0].toFixed(1)}; ${EVENTS} events + ${COPIES} copies, ${CONCURRENCY} at a time, primary killed at 40%`,
);
for (const [name, file, env] of cases) {
  const started = Date.now();
  const result = spawnSync('npx', ['vitest', 'run', file, '-t', 'SIGKILLed|lost at 40%'], {
    encoding: 'utf8',
    env: {
      ...process.env,
      ...env,
      MW_HA_EVENTS: EVENTS,
      MW_HA_COPIES: COPIES,
      MW_HA_CONCURRENCY: CONCURRENCY,
      MW_HA_DEADLINE_MS: '240000',
    },
  });
  const output = `${result.stdout}\n${result.stderr}`.replace(COLORS, '');
  const line = output.split('\n').find((each) => / lost \d+, run twice/.test(each));
  const verdict = / \d+ passed/.test(output) && !/ failed/.test(output) ? 'passed' : 'FAILED';
  console.log(
    `${name.padEnd(32)} ${line?.trim() ?? '(no result line)'} [${verdict}, ${((Date.now() - started) / 1000).toFixed(0)} s]`,
  );
}
