import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../free-port.js';
import { until } from '../until.js';

/** A nats-server with JetStream of the test's own, its file store in a temporary folder; stop() and start() again. */
export async function ownNatsServer() {
  const port = await freePort();
  const store = await mkdtemp(join(tmpdir(), 'mw-nats-'));
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
    child = spawn('nats-server', ['-js', '-sd', store, '-a', '127.0.0.1', '-p', String(port)], {
      stdio: 'ignore',
    });
    await until(listening, { timeoutMs: 20_000, what: 'nats-server listening' });
  }
  async function stop() {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGTERM');
    await exited;
  }
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    start,
    stop,
    async remove() {
      await stop();
      await rm(store, { recursive: true, force: true });
    },
  };
}

/** One server of a JetStream cluster: its name, its client URL, and a way to kill it. */
export interface NatsClusterNode {
  name: string;
  url: string;
  kill(): Promise<void>;
}

/** Three nats-servers with JetStream in one cluster on free ports, each with its file store in a folder of its own. */
export async function ownNatsCluster(size = 3) {
  const nodes = await Promise.all(
    Array.from({ length: size }, async (_, index) => ({
      name: `mw-n${index}`,
      port: await freePort(),
      clusterPort: await freePort(),
      store: await mkdtemp(join(tmpdir(), `mw-nats-c${index}-`)),
    })),
  );
  const routes = nodes.map((node) => `nats://127.0.0.1:${node.clusterPort}`).join(',');
  const children = nodes.map((node) =>
    spawn(
      'nats-server',
      [
        '-js',
        '-sd',
        node.store,
        '-a',
        '127.0.0.1',
        '-p',
        String(node.port),
        '--server_name',
        node.name,
        '--cluster_name',
        'mw-cluster',
        '--cluster',
        `nats://127.0.0.1:${node.clusterPort}`,
        '--routes',
        routes,
      ],
      { stdio: 'ignore' },
    ),
  );
  const listening = (port: number) =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  for (const node of nodes) await until(() => listening(node.port), { timeoutMs: 20_000, what: node.name });
  const kill = async (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  return {
    urls: nodes.map((node) => `nats://127.0.0.1:${node.port}`),
    nodes: nodes.map(
      (node, index): NatsClusterNode => ({
        name: node.name,
        url: `nats://127.0.0.1:${node.port}`,
        kill: () => kill(children[index] as ChildProcess),
      }),
    ),
    async remove() {
      await Promise.all(children.map(kill));
      await Promise.all(nodes.map((node) => rm(node.store, { recursive: true, force: true })));
    },
  };
}
