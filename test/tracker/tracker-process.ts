import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const FIXTURE = fileURLToPath(new URL('fixtures/tracker-receiver.mjs', import.meta.url));

export interface TrackerProcessConfig {
  dist: string;
  secret: string;
  store: 'postgres' | 'redis';
  databaseUrl?: string;
  table?: string;
  redisUrl?: string;
  prefix?: string;
}

/** A receiver process with a tracker (fixtures/tracker-receiver.mjs), as the test drives it over IPC. */
export interface TrackerProcess {
  url: string;
  /** Every transition handler run in the process, as [message id, status, source], in order. */
  transitions: [string, string, string][];
  /** One request (`{ expect }`, `{ reconcile }`, `{ flush }`); its answer comes after every earlier message. */
  request<T = Record<string, unknown>>(request: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

type Answer = { n?: number; port?: number; transition?: [string, string, string]; error?: string };

export async function startTrackerProcess(config: TrackerProcessConfig): Promise<TrackerProcess> {
  const child: ChildProcess = fork(FIXTURE, [], {
    env: { ...process.env, MW_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr = (stderr + String(chunk)).slice(-4000);
  });
  const transitions: TrackerProcess['transitions'] = [];
  const pending = new Map<number, { resolve(answer: Answer): void; reject(error: Error): void }>();
  let listening: (port: number) => void = () => {};
  const port = new Promise<number>((resolve) => {
    listening = resolve;
  });
  child.on('message', (answer: Answer) => {
    if (answer.transition) transitions.push(answer.transition);
    else if (answer.port !== undefined) listening(answer.port);
    else if (answer.n !== undefined) {
      const waiter = pending.get(answer.n);
      pending.delete(answer.n);
      if (answer.error) waiter?.reject(new Error(`The receiver process failed: ${answer.error}`));
      else waiter?.resolve(answer);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const gone = exited.then(() => {
    const error = new Error(`The receiver process exited (code ${child.exitCode}):\n${stderr}`);
    for (const waiter of pending.values()) waiter.reject(error);
    throw error;
  });
  gone.catch(() => {});
  let sequence = 0;
  return {
    url: `http://127.0.0.1:${await Promise.race([port, gone])}/webhooks`,
    transitions,
    request<T>(request: Record<string, unknown>) {
      const n = ++sequence;
      return new Promise<T>((resolve, reject) => {
        pending.set(n, { resolve: resolve as (answer: Answer) => void, reject });
        child.send({ n, ...request });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
