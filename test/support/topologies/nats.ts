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
