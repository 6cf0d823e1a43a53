import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET } from '../support/child-processes.js';
import { type Consumer, installPackedPackage } from '../support/packed-package.js';
import { until } from '../support/until.js';

/**
 * `npx messaging-webhooks listen` runs the CLI two processes down (npm exec → sh -c → node). Stopping the
 * wrapper must stop listen too: a Ctrl-C reaches the whole process group, while a process manager's SIGTERM
 * reaches npx alone, which then ends without passing it on.
 */

let consumer: Consumer;
beforeAll(async () => {
  consumer = await installPackedPackage();
}, 180_000);
afterAll(() => consumer?.remove());

interface ProcessInfo {
  pid: number;
  ppid: number;
  state: string;
}

function processes(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      found.push({ pid: Number(entry), ppid: Number(ppid), state: state as string });
    } catch {
      // The process ended while the list was read.
    }
  }
  return found;
}

function descendants(pid: number): number[] {
  const all = processes();
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const child of all.filter((info) => info.ppid === parent)) {
      found.push(child.pid);
      visit(child.pid);
    }
  };
  visit(pid);
  return found;
}

const commandOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '(ended)';
  }
};

/** Running means alive and not a zombie (an exited process whose new parent has not reaped it yet). */
const running = (pid: number) => processes().some((info) => info.pid === pid && info.state !== 'Z');

describe.runIf(process.platform === 'linux')('npx messaging-webhooks listen', () => {
  it.each([
    { signal: 'SIGINT', to: 'process group', group: true },
    { signal: 'SIGTERM', to: 'npx alone', group: false },
  ] as const)(
    '$signal to the $to ends listen: no orphan left',
    async ({ signal, group }) => {
      const npx = spawn(
        'npx',
        ['--no-install', 'messaging-webhooks', 'listen', '--port', '0', '--secret', SECRET],
        {
          cwd: consumer.dir,
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true, // its own process group, as a terminal gives a command
        },
      );
      const exited = once(npx, 'exit');
      let output = '';
      const listening = new Promise<string>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk;
          const match = output.match(/Listening on (http:\/\/\S+)/);
          if (match) resolve(match[1] as string);
        };
        npx.stdout.on('data', onData);
        npx.stderr.on('data', onData);
        void exited.then(() => reject(new Error(`npx exited before listening:\n${output}`)));
      });
      const pid = npx.pid as number;
      let tree: number[] = [];
      try {
        const url = await listening;
        tree = descendants(pid);
        expect(tree.length).toBeGreaterThanOrEqual(1);
        process.kill(group ? -pid : pid, signal);
        await exited;
        // On timeout the assertion below names the processes left, with their command lines.
        await until(() => !tree.some(running), 10_000).catch(() => {});
        const left = tree.filter(running);
        expect(
          left.map((pid) => `${pid} ${commandOf(pid)}`),
          output,
        ).toEqual([]);
        await expect(fetch(url)).rejects.toThrow();
      } finally {
        for (const left of [pid, ...tree].filter(running)) process.kill(left, 'SIGKILL');
      }
    },
    60_000,
  );
});
