import { execFile, execFileSync } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../free-port.js';
import { until } from '../until.js';

const run = promisify(execFile);
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A PostgreSQL binary run as the postgres user (initdb refuses root). */
async function asPostgres(tool: string, args: string[]): Promise<string> {
  const command = process.getuid?.() === 0 ? 'runuser' : join(PG_BIN, tool);
  const full = process.getuid?.() === 0 ? ['-u', 'postgres', '--', join(PG_BIN, tool), ...args] : args;
  const { stdout } = await run(command, full, { maxBuffer: 1 << 20 });
  return stdout;
}

export interface PostgresPair {
  primaryPort: number;
  standbyPort: number;
  /** The primary's machine lost: its postmaster and every backend SIGKILLed. */
  killPrimary(): Promise<void>;
  /** pg_ctl promote on the standby; resolves once it takes writes. */
  promote(): Promise<void>;
  stop(): Promise<void>;
}

/** Every pair's directory: its servers are stopped when this process exits (also after a test timed out). */
const dirs = new Set<string>();
process.once('exit', () => {
  for (const dir of dirs) {
    for (const data of ['primary', 'standby']) {
      try {
        const ctl = [join(PG_BIN, 'pg_ctl'), '-D', join(dir, data), '-m', 'immediate', 'stop'];
        execFileSync(
          process.getuid?.() === 0 ? 'runuser' : (ctl.shift() as string),
          process.getuid?.() === 0 ? ['-u', 'postgres', '--', ...ctl] : ctl,
          { stdio: 'ignore' },
        );
      } catch {}
    }
  }
});

/**
 * A primary and a streaming standby (initdb, pg_basebackup -R) in a temp dir, on free ports. `synchronous`:
 * the primary commits only once the standby holds the commit (synchronous_standby_names = '*'). The standby
 * does not inherit that setting (`inheritSynchronous` makes it, the trap that blocks every write after
 * promotion).
 */
export async function startPostgresPair(
  options: { synchronous: boolean; inheritSynchronous?: boolean } = { synchronous: true },
): Promise<PostgresPair> {
  const dir = await mkdtemp(join(tmpdir(), 'mw-pg-ha-'));
  dirs.add(dir);
  await run('chown', ['postgres', dir]);
  const primary = join(dir, 'primary');
  const standby = join(dir, 'standby');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const ctl = (data: string, ...args: string[]) => asPostgres('pg_ctl', ['-D', data, ...args]);
  const stop = async () => {
    await Promise.allSettled([
      ctl(primary, '-m', 'immediate', 'stop'),
      ctl(standby, '-m', 'immediate', 'stop'),
    ]);
    await rm(dir, { recursive: true, force: true });
    dirs.delete(dir);
  };
  try {
    await asPostgres('initdb', ['-D', primary, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await appendFile(
      `${primary}/postgresql.conf`,
      [
        `port = ${primaryPort}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        'wal_level = replica',
        'max_wal_senders = 4',
        'max_connections = 40',
        'shared_buffers = 16MB',
        options.synchronous ? "synchronous_standby_names = '*'" : '',
        '',
      ].join('\n'),
    );
    await ctl(primary, '-l', join(dir, 'primary.log'), '-w', 'start');
    await asPostgres('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      standby,
      '-R',
      '-X',
      'stream',
    ]);
    await appendFile(
      `${standby}/postgresql.conf`,
      [`port = ${standbyPort}`, options.inheritSynchronous ? '' : "synchronous_standby_names = ''", ''].join(
        '\n',
      ),
    );
    await ctl(standby, '-l', join(dir, 'standby.log'), '-w', 'start');
    await streaming(primaryPort, options.synchronous ? 'sync' : 'async');
    return {
      primaryPort,
      standbyPort,
      async killPrimary() {
        const pid = (await readFile(join(primary, 'postmaster.pid'), 'utf8')).split('\n')[0] as string;
        const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', pid]).catch(() => ({ stdout: '' }));
        for (const each of [pid, ...stdout.split('\n').map((line) => line.trim())].filter(Boolean)) {
          try {
            process.kill(Number(each), 'SIGKILL');
          } catch {}
        }
      },
      async promote() {
        await ctl(standby, '-w', 'promote');
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Waits until the primary streams to its standby in the given mode. */
async function streaming(port: number, mode: 'sync' | 'async'): Promise<void> {
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await client.connect();
  try {
    await until(
      async () => {
        const { rows } = await client.query(
          "SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'",
        );
        return rows.some((row) => row.sync_state === mode);
      },
      { timeoutMs: 30_000, what: `the standby streaming (${mode})` },
    );
  } finally {
    await client.end();
  }
}
