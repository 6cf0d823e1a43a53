import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../free-port.js';
import { until } from '../until.js';

const run = promisify(execFile);

/**
 * One redis-server of a topology: its port, and how to kill it (SIGKILL, the machine lost) or start it again,
 * or pause it (SIGSTOP: a frozen host, its connections open and silent) and resume it.
 */
export interface RedisNode {
  port: number;
  kill(): Promise<void>;
  start(): Promise<void>;
  pause(): void;
  resume(): void;
  readonly alive: boolean;
}

/** Every process a topology started, killed when this process exits (also after a test timed out). */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts redis-server with `args` in `dir`; resolves once it accepts connections. */
function redisNode(port: number, dir: string, args: string[]): RedisNode {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const node: RedisNode = {
    port,
    get alive() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    async start() {
      const started = spawn(
        'redis-server',
        [...args, '--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      child = started;
      running.add(started);
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      void exited.then(() => running.delete(started));
      await new Promise<void>((resolve, reject) => {
        let output = '';
        const timer = setTimeout(
          () => reject(new Error(`redis-server :${port} did not start:\n${output}`)),
          15_000,
        );
        started.stdout?.on('data', (chunk) => {
          output = (output + String(chunk)).slice(-4000);
          if (/Ready to accept connections|Sentinel ID is/.test(output)) {
            clearTimeout(timer);
            resolve();
          }
        });
        started.once('exit', () => reject(new Error(`redis-server :${port} exited:\n${output}`)));
      });
    },
    async kill() {
      if (!node.alive) return;
      child?.kill('SIGKILL');
      await exited;
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
  };
  return node;
}

/** The settings every data node runs with: durable (append-only file, fsync every second), no snapshots. */
const DURABLE = [
  '--save',
  '',
  '--appendonly',
  'yes',
  '--maxmemory-policy',
  'noeviction',
  '--repl-diskless-sync-delay',
  '0',
];

export interface SentinelTopology {
  /** The name the sentinels monitor the primary under. */
  name: string;
  primary: RedisNode;
  replicas: RedisNode[];
  sentinels: RedisNode[];
  /** The sentinels' addresses, as node-redis createSentinel takes them. */
  sentinelRootNodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

/**
 * A primary, `replicaCount` replicas and three sentinels (quorum 2) on free ports, each in its own temp dir.
 * A primary down for `downAfterMs` is failed over.
 */
export async function startSentinelTopology(replicaCount = 2, downAfterMs = 1000): Promise<SentinelTopology> {
  const dir = await mkdtemp(join(tmpdir(), 'mw-sentinel-'));
  const name = 'mw-primary';
  const started: RedisNode[] = [];
  const node = async (label: string, args: string[]) => {
    const port = await freePort();
    const own = join(dir, `${label}-${port}`);
    await run('mkdir', ['-p', own]);
    const each = redisNode(port, own, args);
    started.push(each);
    await each.start();
    return each;
  };
  const stop = async () => {
    await Promise.all(started.map((each) => each.kill()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const primary = await node('primary', DURABLE);
    const replicas: RedisNode[] = [];
    for (let i = 0; i < replicaCount; i++)
      replicas.push(
        await node(`replica${i}`, [...DURABLE, '--replicaof', '127.0.0.1', String(primary.port)]),
      );
    await replicasOnline(primary, replicaCount);
    const sentinels: RedisNode[] = [];
    for (let i = 0; i < 3; i++) {
      const conf = join(dir, `sentinel${i}.conf`);
      await writeFile(
        conf,
        [
          `sentinel monitor ${name} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
          `sentinel failover-timeout ${name} 10000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      const port = await freePort();
      const sentinel = redisNode(port, dir, [conf, '--sentinel']);
      started.push(sentinel);
      await sentinel.start();
      sentinels.push(sentinel);
    }
    return {
      name,
      primary,
      replicas,
      sentinels,
      sentinelRootNodes: sentinels.map((each) => ({ host: '127.0.0.1', port: each.port })),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface ClusterTopology {
  masters: RedisNode[];
  replicas: RedisNode[];
  /** The nodes' addresses, as node-redis createCluster takes them. */
  rootNodes: { url: string }[];
  /** The node that now serves `key`'s slot as its master. */
  masterOf(key: string): Promise<RedisNode>;
  /** Starts one more replica of `master`, joined to the cluster and in sync. */
  addReplica(master: RedisNode): Promise<RedisNode>;
  stop(): Promise<void>;
}

/** Three masters with a replica each, on free ports (data and bus), created with redis-cli --cluster create. */
export async function startClusterTopology(nodeTimeoutMs = 1000): Promise<ClusterTopology> {
  const dir = await mkdtemp(join(tmpdir(), 'mw-cluster-'));
  const nodes: RedisNode[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((each) => each.kill()));
    await rm(dir, { recursive: true, force: true });
  };
  const byPort = new Map<number, RedisNode>();
  const clusterNode = async () => {
    const port = await freePort();
    const bus = await freePort();
    const own = join(dir, String(port));
    await run('mkdir', ['-p', own]);
    const args = [
      ...DURABLE,
      '--cluster-enabled',
      'yes',
      '--cluster-port',
      String(bus),
      '--cluster-config-file',
      join(own, 'nodes.conf'),
      '--cluster-node-timeout',
      String(nodeTimeoutMs),
    ];
    const each = redisNode(port, own, args);
    nodes.push(each);
    byPort.set(port, each);
    await each.start();
    return each;
  };
  try {
    for (let i = 0; i < 6; i++) await clusterNode();
    const addresses = nodes.map((each) => `127.0.0.1:${each.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes']);
    await clusterSettled(nodes);
    for (const each of nodes) {
      if (/role:master/.test(await cli(each.port, 'INFO', 'replication'))) await replicasOnline(each, 1);
    }
    return {
      masters: nodes.slice(0, 3),
      replicas: nodes.slice(3),
      rootNodes: nodes.slice(0, 3).map((each) => ({ url: `redis://127.0.0.1:${each.port}` })),
      async masterOf(key) {
        for (const each of nodes) {
          if (!each.alive) continue;
          const slot = (await cli(each.port, 'CLUSTER', 'KEYSLOT', key)).trim();
          const shards = await cli(each.port, 'CLUSTER', 'SLOTS');
          const port = masterPortOfSlot(shards, Number(slot));
          const found = port === undefined ? undefined : byPort.get(port);
          if (found) return found;
        }
        throw new Error(`No live node knows the master of ${key}.`);
      },
      async addReplica(master) {
        const id = (await cli(master.port, 'CLUSTER', 'MYID')).trim();
        const before = ((await cli(master.port, 'INFO', 'replication')).match(/state=online/g) ?? []).length;
        const added = await clusterNode();
        await run('redis-cli', [
          '--cluster',
          'add-node',
          `127.0.0.1:${added.port}`,
          `127.0.0.1:${master.port}`,
          '--cluster-slave',
          '--cluster-master-id',
          id,
        ]);
        await replicasOnline(master, before + 1);
        await clusterSettled(nodes);
        return added;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Runs one redis-cli command against a node and returns its raw output. */
export async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args]);
  return stdout;
}

/** Waits until `count` replicas of `primary` finished their sync and stream its writes. */
export async function replicasOnline(primary: Pick<RedisNode, 'port'>, count: number): Promise<void> {
  await until(
    async () =>
      ((await cli(primary.port, 'INFO', 'replication')).match(/state=online/g) ?? []).length >= count,
    { what: `${count} replicas of :${primary.port} online` },
  );
}

/** Every node sees the cluster as ok and all 16384 slots served. */
async function clusterSettled(nodes: RedisNode[]): Promise<void> {
  await until(
    async () => {
      const infos = await Promise.all(nodes.map((each) => cli(each.port, 'CLUSTER', 'INFO')));
      return infos.every((info) => /cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info));
    },
    { what: 'the cluster settled, all 16384 slots served' },
  );
}

/** The master's port of `slot` in redis-cli's CLUSTER SLOTS output (start, end, master ip, port, id, …). */
function masterPortOfSlot(output: string, slot: number): number | undefined {
  const lines = output.split('\n').map((line) => line.trim());
  for (let i = 0; i + 3 < lines.length; i++) {
    const start = Number(lines[i]);
    const end = Number(lines[i + 1]);
    if (!/^\d+$/.test(lines[i] ?? '') || !/^\d+$/.test(lines[i + 1] ?? '')) continue;
    if (lines[i + 2] === '127.0.0.1' && slot >= start && slot <= end) return Number(lines[i + 3]);
  }
  return undefined;
}
