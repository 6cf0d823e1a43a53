import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '../free-port.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/receiver.mjs', import.meta.url));

/** Children still running: killed when this process exits, also after a test timed out mid-run. */
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function track(child: ChildProcess): Promise<void> {
  children.add(child);
  return new Promise((resolve) =>
    child.once('exit', () => {
      children.delete(child);
      resolve();
    }),
  );
}

export interface ReceiverConfig {
  dist: string;
  store: 'redis' | 'postgres';
  secret: string;
  leaseMs: number;
  failRate: number;
  seed: number;
  counterUrl: string;
  counterPrefix: string;
  redisUrl?: string;
  prefix?: string;
  databaseUrl?: string;
  table?: string;
  effectsTable?: string;
  hangEventId?: string;
}

export interface ReceiverProcess {
  url: string;
  child: ChildProcess;
  /** Resolves with the first stdout message matching `test`. */
  waitFor(test: (message: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export function startReceiver(config: ReceiverConfig): Promise<ReceiverProcess> {
  return startProcess(FIXTURE, config);
}

/**
 * Runs a fixture script configured by MW_CONFIG; ready once it prints `{"port":…}` (a server) or
 * `{"ready":true}` (a process without one, whose `url` is then empty).
 */
export async function startProcess(script: string, config: object): Promise<ReceiverProcess> {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, MW_CONFIG: JSON.stringify(config) },
    // The fixture exits when its stdin closes: when this process dies, even by SIGKILL, so does it.
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr = (stderr + String(chunk)).slice(-4000);
  });
  const messages: Record<string, unknown>[] = [];
  const listeners = new Set<() => void>();
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    try {
      messages.push(JSON.parse(line));
    } catch {
      return;
    }
    for (const listener of listeners) listener();
  });
  const exited = track(child);
  const waitFor: ReceiverProcess['waitFor'] = (test, timeoutMs = 15_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (!messages.some(test)) return;
        cleanup();
        resolve();
      };
      const onExit = () => {
        cleanup();
        reject(new Error(`The receiver process exited (code ${child.exitCode}):\n${stderr}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`The receiver process did not report in ${timeoutMs} ms:\n${stderr}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
        child.off('exit', onExit);
      };
      listeners.add(check);
      child.once('exit', onExit);
      check();
    });
  await waitFor((message) => typeof message.port === 'number' || message.ready === true);
  const port = messages.find((message) => typeof message.port === 'number')?.port;
  return {
    url: port === undefined ? '' : `http://127.0.0.1:${port}/webhooks`,
    child,
    waitFor,
    stop: () => stopProcess(child, exited),
  };
}

async function stopProcess(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

export interface RedisServer {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  remove(): Promise<void>;
}

/** An append-only file and no snapshots: a restart remembers everything, the way a production Redis should. */
const DURABLE_REDIS = ['--save', '', '--appendonly', 'yes'];

/**
 * A Redis server of the test's own, on its own port (the shared one is never touched), started with
 * `config` (redis-server arguments; default: durable).
 */
export async function ownRedisServer(config: string[] = DURABLE_REDIS): Promise<RedisServer> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'mw-redis-'));
  let child: ChildProcess | undefined;
  let exited = Promise.resolve();
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const args = ['--port', String(port), '--bind', '127.0.0.1', ...config];
      const started = spawn('redis-server', [...args, '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      exited = track(started);
      await new Promise<void>((resolve, reject) => {
        let output = '';
        const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
        started.stdout?.on('data', (chunk) => {
          output += String(chunk);
          if (output.includes('Ready to accept connections')) {
            clearTimeout(timer);
            resolve();
          }
        });
        started.once('exit', () => reject(new Error(`redis-server exited:\n${output}`)));
      });
    },
    async stop() {
      if (child) await stopProcess(child, exited);
    },
    async remove() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
