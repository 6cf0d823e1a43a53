import { readFileSync } from 'node:fs';
import { startPoller } from '../base/poller.js';

/** The parent of `pid` as /proc tells it (Linux); undefined where there is no /proc or no such process. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * Read when the CLI loads, not when it starts to listen: a starter that ends in between (a process manager
 * stopping it at once, a loaded machine) would otherwise be taken for the process's starter.
 */
const startedUnder = {
  parent: process.ppid,
  grandparent: process.env.npm_command === undefined ? undefined : parentOf(process.ppid),
};

/**
 * Calls `onEnded` once the process that started this one has ended. npm (npx, npm exec, npm run) starts a
 * command as npm → sh -c → node, and on SIGTERM npm may end without passing the signal on: then this process,
 * or the shell between, is re-parented. So this process's parent is watched, and under npm the shell's too.
 * Returns the function that stops watching.
 */
export function whenStarterEnds(onEnded: () => void): () => void {
  const { parent, grandparent } = startedUnder;
  const poller = startPoller(() => {
    const shellOrphaned = grandparent !== undefined && parentOf(parent) !== grandparent;
    if (process.ppid !== parent || shellOrphaned) onEnded();
  }, 250);
  return () => poller.stop();
}
