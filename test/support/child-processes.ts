import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler } from '../../adapters/node.js';
import { createReceiver, type Receiver, type SignatureProfile } from '../../src/index.js';
import { cliPath, root } from './build.js';

export const SECRET = 'whsec_cli_test_9d8c7b6a5f4e3d2c';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Env of a child: no colour, no secret from the outer environment unless a test gives one. */
function childEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { WEBHOOK_SECRET: _unused, ...rest } = process.env;
  return { ...rest, NO_COLOR: '1', ...env };
}

/** Runs `node dist/src/cli/main.js …` to its end (killed after `timeoutMs`). */
export function runCli(
  args: string[],
  options: { input?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd: root, env: childEnv(options.env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 25_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

export interface Running {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code once the child exited. */
  exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` in stdout+stderr, or rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(): Promise<number | null>;
}

/** Starts a long-running child (the CLI's listen, an example server). */
export function start(command: string[], env: Record<string, string> = {}, cwd = root): Running {
  const [file, ...args] = command;
  const child = spawn(file as string, args, { cwd, env: childEnv(env) });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk;
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      resolve(code);
      for (const listener of listeners) listener();
    }),
  );
  return {
    child,
    output: () => output,
    exited,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = output.match(pattern);
          if (match) {
            cleanup();
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            cleanup();
            reject(
              new Error(
                `Exited (${child.exitCode ?? child.signalCode}) before ${pattern}. Output:\n${output}`,
              ),
            );
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`No ${pattern} within ${timeoutMs} ms. Output:\n${output}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

export const startCli = (args: string[], env?: Record<string, string>) =>
  start([process.execPath, cliPath, ...args], env);

export interface TestServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1, a free port. */
export async function startServer(listener: RequestListener): Promise<TestServer> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/webhooks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface CountingReceiver extends TestServer {
  receiver: Receiver;
  /** Handler runs that succeeded, per event id: the event's effects. */
  runs: Map<string, number>;
  /** Handler calls per event id, failed ones included. */
  calls: Map<string, number>;
  /** The last event seen per id. */
  events: Map<string, unknown>;
}

/**
 * A real receiver (createReceiver + the node adapter) whose handler counts runs per event id.
 * `fail(id, run)` makes a run throw: the claim is released and the sender must retry.
 */
export async function startCountingReceiver(
  options: {
    fail?: (id: string, run: number) => boolean;
    /** The handler lets the event loop turn once before it ends: copies arriving meanwhile find it in flight. */
    yieldsOnce?: boolean;
    /** The receiver's own options (default: SECRET and the default profile). */
    secret?: string;
    signatureHeader?: string;
    profile?: SignatureProfile;
  } = {},
): Promise<CountingReceiver> {
  const { secret = SECRET, signatureHeader, profile } = options;
  const receiver = createReceiver({ secrets: secret, signatureHeader, profile });
  const runs = new Map<string, number>();
  const calls = new Map<string, number>();
  const events = new Map<string, unknown>();
  receiver.onAny(async (event) => {
    const id = event.id as string;
    events.set(id, event);
    const call = (calls.get(id) ?? 0) + 1;
    calls.set(id, call);
    if (options.yieldsOnce) await new Promise((resolve) => setImmediate(resolve));
    if (options.fail?.(id, call)) throw new Error('injected handler failure');
    runs.set(id, (runs.get(id) ?? 0) + 1);
  });
  const server = await startServer(createNodeHandler(receiver));
  return { ...server, receiver, runs, calls, events };
}
