import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, ensureBuilt } from '../support/build.js';
import { runCli } from '../support/child-processes.js';
import { DATABASE_URL, REDIS_URL, testRun } from '../support/harness/cluster.js';
import { bullmqHarness, pgBossHarness } from './dead-letter-engines.js';
import { poisonedQueue } from './dead-letters-conformance.js';

/* `messaging-webhooks dead-letter` run as a user runs it (the built CLI, a child process) on the real engines. */
const { run } = testRun();
const prefix = `mw-test:${run}:bull`;
const schema = `mw_dlcli_${run}`;
const bullmq = bullmqHarness(prefix);
const pgBoss = pgBossHarness(schema);
const closers: (() => Promise<unknown>)[] = [];

/** A queue of the harness with `count` dead letters; its worker keeps running. */
async function withDeadLetters(count: number, idOf?: (index: number) => string) {
  const poisoned = poisonedQueue(bullmq, 1);
  const deadLetters = bullmq.deadLetters(poisoned.queue);
  const worker = await bullmq.worker(poisoned.receiver, poisoned.queue);
  closers.push(
    () => poisoned.queue.close(),
    () => deadLetters.close(),
    () => worker.close(),
  );
  const ids = await poisoned.poison(count, deadLetters, idOf);
  const flags = ['--redis-url', REDIS_URL, '--prefix', prefix, '--queue', poisoned.queue.queue.name];
  const cli = (...args: string[]) => runCli(['dead-letter', ...args, ...flags]);
  return { ...poisoned, deadLetters, ids, cli };
}

/**
 * The CLI on a terminal of its own (util-linux `script` gives it a pseudo-terminal): `answer` is typed once the
 * question is asked. What the terminal showed, and the exit code.
 */
function onTerminal(args: string[], answer: string): Promise<{ code: number | null; screen: string }> {
  const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, cliPath, 'dead-letter', ...args].map(quote).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  let answered = false;
  child.stdout.on('data', (chunk) => {
    screen += chunk;
    if (!answered && screen.includes('[y/N]')) {
      answered = true;
      child.stdin.write(`${answer}\r`);
    }
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    }),
  );
}

beforeAll(ensureBuilt, 180_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await bullmq.cleanup();
  await pgBoss.cleanup();
});

describe('messaging-webhooks dead-letter on BullMQ', () => {
  it('lists as a table and as JSON, pages, and shows one with its payload', async () => {
    const { ids, cli } = await withDeadLetters(3);
    const json = await cli('list', '--json');
    expect(json.code, json.stderr).toBe(0);
    const listed = JSON.parse(json.stdout);
    expect(listed).toMatchObject({ total: 3, offset: 0, limit: 20 });
    expect(new Set(listed.deadLetters.map((entry: { id: string }) => entry.id))).toEqual(new Set(ids));
    expect(listed.deadLetters[0]).toMatchObject({
      event: { type: 'message.delivered' },
      error: { reason: 'handler_failed', message: expect.stringContaining('poisoned payload') },
      attempts: 1,
      failedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });

    const table = await cli('list', '--limit', '2');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^id\s+type\s+mode\s+attempts\s+failed at\s+reason\s+error$/m);
    expect(table.stdout).toContain('message.delivered');
    expect(table.stdout).toContain('1–2 of 3 dead letters');
    expect(table.stdout).toContain('Next page: --offset 2');

    const [id] = ids as [string];
    const shown = await cli('show', id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id\\s+${id}$`, 'm'));
    expect(shown.stdout).toMatch(/^reason\s+handler_failed$/m);
    expect(shown.stdout).toContain('"message_id"');
    const missing = await cli('show', 'evt_not_there');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no dead letter evt_not_there in queue .*dead-letter list/);
  }, 60_000);

  it('shows what an event and its error carry escaped: no control character reaches the terminal', async () => {
    // Clipboard write (OSC 52), window title (OSC 0), clear screen, concealed text, a C1 CSI, DEL, NEL, U+2028.
    const hostile =
      '\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]0;owned\u0007\u001b[2J\u001b[8m\u009b31m\u007f\u0085\u2028';
    const { ids, cli } = await withDeadLetters(1, () => `evt_${randomUUID()}${hostile}`);
    const [id] = ids as [string];
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may reach the terminal
    const control = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/;
    const escaped = '\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u001b]0;owned\\u0007\\u001b[2J\\u001b[8m\\u009b31m';
    for (const args of [['list'], ['show', id]]) {
      const shown = await cli(...args);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).not.toMatch(control);
      expect(shown.stdout).toContain(`evt_${id.slice(4, 40)}${escaped}`);
    }
    const json = JSON.parse((await cli('show', id, '--json')).stdout);
    expect(json.deadLetter.id).toBe(id);
  }, 60_000);

  it('refuses to replay or purge several events without --yes when it cannot ask, then does with it', async () => {
    const { ids, cli, deadLetters, state, ranOnce } = await withDeadLetters(3);
    const [first, second] = ids as [string, string];
    for (const args of [
      ['replay', first, second],
      ['purge', '--all'],
    ]) {
      const refused = await cli(...args);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/no terminal to confirm it on\. Pass --yes/);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(await deadLetters.count()).toBe(3);

    state.poisoned = false;
    const replayed = await cli('replay', first, '--json');
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ replayed: [first], skipped: [] });
    await ranOnce(first);
    const again = await cli('replay', first);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(new RegExp(`${first}\\s+skipped: (live|completed)`));

    const purged = await cli('purge', '--all', '--yes');
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toContain('2 purged, 0 skipped');
    expect((await cli('list')).stdout).toMatch(/^No dead letters in queue/);
    expect(state.runs.get(first)).toEqual([1]);
  }, 60_000);

  it('asks on a terminal before purging several events: n leaves them, y purges them', async () => {
    const { cli, deadLetters, queue } = await withDeadLetters(3);
    const flags = ['--redis-url', REDIS_URL, '--prefix', prefix, '--queue', queue.queue.name];
    const declined = await onTerminal(['purge', '--all', ...flags], 'n');
    expect(declined.screen).toContain(`Purge 3 dead letters of queue ${queue.queue.name}? [y/N]`);
    expect(declined.screen).toContain('Nothing was purged.');
    expect(declined.code).toBe(1);
    expect(await deadLetters.count()).toBe(3);
    const accepted = await onTerminal(['purge', '--all', ...flags], 'y');
    expect(accepted.screen).toContain('Purging: 3 of 3 dead letters');
    expect(accepted.screen).toContain('3 purged, 0 skipped');
    expect(accepted.code).toBe(0);
    expect((await cli('list')).stdout).toMatch(/^No dead letters in queue/);
  }, 60_000);

  it('shows, replays and purges an event whose id holds a colon, as list shows it', async () => {
    const { ids, cli, state } = await withDeadLetters(2, (index) => `evt_${run}:colon:${index}`);
    const [replayed, purged] = ids as [string, string];
    expect((await cli('list')).stdout).toContain(replayed);
    const shown = await cli('show', replayed);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id\\s+${replayed}$`, 'm'));
    state.poisoned = false;
    expect(JSON.parse((await cli('replay', replayed, '--json')).stdout)).toMatchObject({
      replayed: [replayed],
    });
    expect(JSON.parse((await cli('purge', purged, '--json')).stdout)).toMatchObject({ purged: [purged] });
  }, 60_000);

  it('names the mistake in one line, exit 2', async () => {
    const { cli } = await withDeadLetters(0);
    const wrong = await cli('frobnicate');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/unknown action 'frobnicate'\. Use one of: list, show, replay, purge/);
    expect((await cli('replay')).stderr).toMatch(/give the event ids .* or --all/);
  }, 30_000);
});

describe('messaging-webhooks dead-letter on pg-boss', () => {
  it('finds the engine from --database-url and lists the dead letters', async () => {
    const poisoned = poisonedQueue(pgBoss, 1);
    const deadLetters = pgBoss.deadLetters(poisoned.queue);
    const worker = await pgBoss.worker(poisoned.receiver, poisoned.queue);
    closers.push(
      () => poisoned.queue.close(),
      () => deadLetters.close(),
      () => worker.close(),
    );
    const [id] = await poisoned.poison(1, deadLetters);
    const flags = ['--database-url', DATABASE_URL, '--schema', schema, '--queue', poisoned.queue.name];
    const listed = await runCli(['dead-letter', 'list', '--json', ...flags]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ total: 1, deadLetters: [{ id, attempts: 1 }] });
    const wrongQueue = await runCli(['dead-letter', 'list', ...flags, '--queue', 'no_such_queue']);
    expect(wrongQueue.code).toBe(1);
    expect(wrongQueue.stderr).toMatch(/pg-boss has no queue 'no_such_queue'/);
  }, 60_000);
});
