import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../support/free-port.js';
import { until } from '../support/until.js';
import type { ConformanceServer } from './conformance.js';
import {
  ACCOUNT,
  FAILING_OPERATOR,
  type HandledEvent,
  LOOKUP_TIMEOUT_MS,
  MAX_BODY_BYTES,
  SECRET,
  SLOW_OPERATOR,
  TENANTS,
} from './conformance-receiver.js';

/** A Next.js app on disk: `next` is the path of its own `next/dist/bin/next`, run from `cwd` on `app`. */
export interface NextApp {
  cwd: string;
  next: string;
  app: string;
}

export interface StartedNext {
  base: string;
  stop(): Promise<void>;
}

/** Runs `next <args>` to its end; fails with the tail of its output. */
export async function runNext(target: NextApp, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn(process.execPath, [target.next, ...args], {
    cwd: target.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`next ${args.join(' ')} exited with ${code}:\n${output.slice(-4000)}`);
}

/** `next build` of the app as in production (no secret needed: the receiver is made at the first request). */
export function buildNext(target: NextApp, env: NodeJS.ProcessEnv): Promise<void> {
  return runNext(target, ['build', target.app], { ...env, NODE_ENV: 'production' });
}

/** `next start` of the built app on a loopback port, in its own process group (stopped together). */
export async function startNext(target: NextApp, env: NodeJS.ProcessEnv): Promise<StartedNext> {
  const port = await freePort();
  const server = spawn(
    process.execPath,
    [target.next, 'start', target.app, '-p', String(port), '-H', '127.0.0.1'],
    { cwd: target.cwd, env: { ...env, NODE_ENV: 'production' }, stdio: 'ignore', detached: true },
  );
  const stop = async () => {
    if (server.pid === undefined || server.exitCode !== null) return;
    const exited = once(server, 'exit');
    process.kill(-server.pid, 'SIGTERM');
    await exited;
  };
  const base = `http://127.0.0.1:${port}`;
  try {
    const url = `${base}/api/webhooks/events`;
    await until(
      async () => {
        if (server.exitCode !== null) throw new Error(`next start exited with ${server.exitCode}`);
        return fetch(url).then(
          () => true,
          () => false,
        );
      },
      { timeoutMs: 30_000, what: `${url} to answer (whatever its status)` },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { base, stop };
}

/**
 * A conformance target on a route of the example app (examples/next-app) started at `base()`: the `events`
 * route lists what the handlers processed. The server is stopped once, by whoever started it.
 */
export function exampleRoute(
  base: () => string,
  path: string,
  events = '/api/webhooks/events',
): () => Promise<ConformanceServer> {
  return async () => ({
    url: `${base()}${path}`,
    handled: async () =>
      ((await (await fetch(`${base()}${events}`)).json()) as { events: HandledEvent[] }).events,
    close: async () => {},
  });
}

/**
 * The environment the example app reads to behave like createConformanceReceiver: the secret, the body limit,
 * the failing and slow operators, and the accounts of its `[account]` routes with their lookup's behaviour.
 */
export function conformanceEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...env,
    WEBHOOK_SECRET: SECRET,
    MAX_BODY_BYTES: String(MAX_BODY_BYTES),
    SIMULATE_FAILURE_OPERATOR: FAILING_OPERATOR,
    SIMULATE_SLOW_OPERATOR: SLOW_OPERATOR,
    WEBHOOK_SECRETS_BY_ACCOUNT: JSON.stringify({
      [ACCOUNT]: SECRET,
      [TENANTS.other.account]: TENANTS.other.secret,
      [TENANTS.rotating.account]: TENANTS.rotating.secrets,
    }),
    SIMULATE_LOOKUP_FAILURE_ACCOUNT: TENANTS.failing,
    SIMULATE_LOOKUP_HANG_ACCOUNT: TENANTS.hanging,
    LOOKUP_TIMEOUT_MS: String(LOOKUP_TIMEOUT_MS),
  };
}
