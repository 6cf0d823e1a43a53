import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../free-port.js';
import { until } from '../until.js';

/**
 * A RabbitMQ node of the test's own (its node name, ports, database and logs in a temporary folder, no plugins);
 * stop() and start() again on the same data. rabbitmq-server runs as the rabbitmq user, which owns the folder.
 */
export async function ownRabbitmqNode() {
  const port = await freePort();
  const dist = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'mw-rmq-'));
  await mkdir(join(dir, 'mnesia'));
  await mkdir(join(dir, 'log'));
  await writeFile(join(dir, 'enabled_plugins'), '[].\n');
  await writeFile(join(dir, 'rabbitmq.conf'), '');
  execFileSync('chown', ['-R', 'rabbitmq', dir]);
  const env = {
    ...process.env,
    RABBITMQ_NODENAME: `mw${port}@localhost`,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(dist),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_FEATURE_FLAGS_FILE: join(dir, 'feature_flags'),
    RABBITMQ_PLUGINS_EXPAND_DIR: join(dir, 'plugins-expand'),
  };
  let child: ChildProcess | undefined;
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  async function start() {
    child = spawn('rabbitmq-server', [], { cwd: dir, env, stdio: 'ignore', detached: true });
    await until(listening, { timeoutMs: 60_000, what: 'rabbitmq-server listening' });
  }
  async function stop() {
    const running = child;
    child = undefined;
    if (running?.pid && running.exitCode === null) {
      const exited = once(running, 'exit');
      process.kill(-running.pid, 'SIGTERM');
      await exited;
    }
    // rabbitmq-server hands the node to the rabbitmq user in a session of its own: its processes are found by
    // this node's name in their environment, and stopped by their ids.
    await endNode(env.RABBITMQ_NODENAME, 'SIGTERM');
  }
  await start();
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    start,
    stop,
    async remove() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Signals every process of the node `name`, then waits until none is left: a node still shutting down writes
 * its logs, and its folder cannot be removed under it. One that outlives a SIGTERM by 30 s is SIGKILLed.
 */
async function endNode(name: string, signal: NodeJS.Signals): Promise<void> {
  const entry = `RABBITMQ_NODENAME=${name}`;
  const signalAll = async (which: NodeJS.Signals) => {
    for (const pid of await processesWith(entry)) {
      try {
        process.kill(pid, which);
      } catch {
        // gone already
      }
    }
  };
  const gone = async () => (await processesWith(entry)).length === 0;
  await signalAll(signal);
  try {
    await until(gone, { timeoutMs: 30_000, what: `the processes of ${name} ended` });
  } catch (error) {
    if (signal === 'SIGKILL') throw error;
    await signalAll('SIGKILL');
    await until(gone, { timeoutMs: 10_000, what: `the processes of ${name} killed` });
  }
}

/** The ids of the processes whose environment holds `entry` (this node's own name: only processes it started). */
async function processesWith(entry: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const environ = await readFile(`/proc/${name}/environ`, 'latin1').catch(() => '');
    if (environ.split('\0').includes(entry)) pids.push(Number(name));
  }
  return pids;
}

/** Three RabbitMQ nodes of the test's own joined in one cluster (an Erlang cookie of their own); kill() one by name. */
export async function ownRabbitmqCluster(size = 3) {
  const cookie = `mw${randomUUID().replaceAll('-', '')}`;
  const base = await mkdtemp(join(tmpdir(), 'mw-rmqc-'));
  const nodes = await Promise.all(
    Array.from({ length: size }, async (_, index) => {
      const dir = join(base, `n${index}`);
      const port = await freePort();
      const dist = await freePort();
      await mkdir(join(dir, 'mnesia'), { recursive: true });
      await mkdir(join(dir, 'log'));
      await writeFile(join(dir, 'enabled_plugins'), '[].\n');
      await writeFile(join(dir, 'rabbitmq.conf'), '');
      return { dir, port, dist, name: `mwc${port}@localhost` };
    }),
  );
  execFileSync('chown', ['-R', 'rabbitmq', base]);
  const envOf = (node: (typeof nodes)[number]) => ({
    ...process.env,
    RABBITMQ_ERLANG_COOKIE: cookie,
    RABBITMQ_NODENAME: node.name,
    RABBITMQ_NODE_PORT: String(node.port),
    RABBITMQ_DIST_PORT: String(node.dist),
    RABBITMQ_MNESIA_BASE: join(node.dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(node.dir, 'log'),
    RABBITMQ_CONFIG_FILE: join(node.dir, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(node.dir, 'enabled_plugins'),
    RABBITMQ_FEATURE_FLAGS_FILE: join(node.dir, 'feature_flags'),
    RABBITMQ_PLUGINS_EXPAND_DIR: join(node.dir, 'plugins-expand'),
  });
  for (const node of nodes) {
    spawn('rabbitmq-server', [], {
      cwd: node.dir,
      env: envOf(node),
      stdio: 'ignore',
      detached: true,
    }).unref();
  }
  const ctl = (node: string, ...args: string[]) =>
    execFileSync('rabbitmqctl', ['--erlang-cookie', cookie, '-n', node, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  const stopNode = (name: string) => endNode(name, 'SIGKILL');
  try {
    for (const node of nodes) {
      await until(() => listeningOn(node.port), { timeoutMs: 90_000, what: `${node.name} listening` });
    }
    const [first, ...rest] = nodes as [(typeof nodes)[number], ...typeof nodes];
    for (const node of rest) {
      ctl(node.name, 'stop_app');
      ctl(node.name, 'join_cluster', first.name);
      ctl(node.name, 'start_app');
    }
  } catch (error) {
    for (const node of nodes) await stopNode(node.name);
    await rm(base, { recursive: true, force: true });
    throw error;
  }
  return {
    urls: nodes.map((node) => `amqp://guest:guest@127.0.0.1:${node.port}`),
    /** The node that holds the leader of a quorum queue. */
    leaderOf(queue: string): string | undefined {
      const rows = JSON.parse(
        ctl(nodes[0]?.name as string, 'list_queues', 'name', 'leader', '--formatter', 'json'),
      );
      return (rows as { name: string; leader: string }[]).find((row) => row.name === queue)?.leader;
    },
    /** SIGKILLs every process of the node; resolves once they are gone. */
    kill: stopNode,
    /**
     * Finds the processes of the node now, and returns what SIGKILLs them at once (no wait between the
     * moment it is called and the signals); `kill` afterwards finds any it started since.
     */
    async killer(name: string): Promise<() => void> {
      const pids = await processesWith(`RABBITMQ_NODENAME=${name}`);
      return () => {
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
      };
    },
    async remove() {
      for (const node of nodes) await stopNode(node.name);
      await rm(base, { recursive: true, force: true });
    },
  };
}

function listeningOn(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
