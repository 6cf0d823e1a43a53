import { createInterface } from 'node:readline/promises';
import type { DeadLetterProgress, DeadLetterSelection } from '../durable/dead-letters.js';
import { BIN, type Command, integer, parse, UsageError } from './args.js';
import {
  ENGINE_HELP,
  engineOptions,
  type OpenedDeadLetters,
  openDeadLetters,
} from './dead-letter-connect.js';
import { changeReport, listReport, showReport } from './dead-letter-output.js';

const help = `Usage: ${BIN} dead-letter <list|show|replay|purge> [ids…] [options]

The events that failed every attempt and sit in the job engine's dead-letter (BullMQ's failed set, pg-boss's
dead-letter queue):
  list                   the latest first: id, type, attempts, when it failed, why
  show <id>              one, with its payload and its error
  replay <id…> | --all   back in the queue with a fresh attempt count, under the same job id: an event whose job
                         is waiting or running is skipped, so it never runs twice
  purge <id…> | --all    deleted from the engine (a later delivery of the event is a new job)
Ids are event ids (evt_…) as list shows them. Replaying or purging more than one event asks first (y/N) on a
terminal; elsewhere pass --yes. Exit codes: 0 done, 1 an engine error or an event skipped or not found, 2 a usage
mistake.

  --limit N           list: how many (default 20, at most 1000)
  --offset N          list: how many to skip (default 0)
  --all               replay, purge: every dead letter of the queue
  --yes               replay, purge: do not ask
  --json              print JSON (for scripts)
${ENGINE_HELP}
  -h, --help          this help

Example:
  ${BIN} dead-letter list --redis-url redis://127.0.0.1:6379 --queue sms-webhooks
  ${BIN} dead-letter replay evt_01HX… --database-url postgres://localhost/app --queue sms_webhooks`;

const options = {
  ...engineOptions,
  limit: { type: 'string' },
  offset: { type: 'string' },
  all: { type: 'boolean' },
  yes: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const COMMAND = 'dead-letter';
const ACTIONS = ['list', 'show', 'replay', 'purge'] as const;
type Action = (typeof ACTIONS)[number];
type Values = ReturnType<typeof parse<typeof options>>['values'];

export const deadLetter: Command = {
  name: COMMAND,
  summary: "list, show, replay or purge the events in the job engine's dead-letter",
  help,
  async run(argv) {
    const { values, positionals } = parse(COMMAND, argv, options);
    const [action, ...ids] = positionals;
    if (!ACTIONS.includes(action as Action)) {
      const given = action === undefined ? 'no action' : `unknown action '${action}'`;
      throw new UsageError(`${COMMAND}: ${given}. Use one of: ${ACTIONS.join(', ')} (see --help).`);
    }
    const selection = selectionOf(action as Action, ids, values);
    const page = {
      limit: integer(`${COMMAND} list`, 'limit', values.limit, 20, 1, 1000),
      offset: integer(`${COMMAND} list`, 'offset', values.offset, 0, 0, Number.MAX_SAFE_INTEGER),
    };
    // Refused before anything is opened: ids named on the command line need no engine to count.
    if (selection !== 'all') await confirmed(action as Action, selection, values, async () => 0, '');
    const opened = await openDeadLetters(`${COMMAND} ${action}`, values);
    try {
      return await perform(action as Action, selection, values, page, opened);
    } finally {
      await opened.close();
    }
  },
};

/** What the action takes: nothing (list), one id (show), ids or --all (replay, purge). */
function selectionOf(action: Action, ids: string[], values: Values): DeadLetterSelection {
  const command = `${COMMAND} ${action}`;
  if (action === 'list') {
    if (ids.length > 0) throw new UsageError(`${command}: unexpected argument '${ids[0]}'; use show <id>.`);
    return [];
  }
  if (action === 'show') {
    if (ids.length !== 1) throw new UsageError(`${command}: give one event id, as list shows it.`);
    return ids;
  }
  if (values.all && ids.length > 0) throw new UsageError(`${command}: give ids or --all, not both.`);
  if (!values.all && ids.length === 0) {
    throw new UsageError(`${command}: give the event ids (as list shows them), or --all for every one.`);
  }
  return values.all ? 'all' : ids;
}

async function perform(
  action: Action,
  selection: DeadLetterSelection,
  values: Values,
  { limit, offset }: { limit: number; offset: number },
  { deadLetters, queue }: OpenedDeadLetters,
): Promise<number> {
  const print = (text: string) => process.stdout.write(`${text}\n`);
  if (action === 'list') {
    const [entries, total] = [await deadLetters.list({ limit, offset }), await deadLetters.count()];
    print(
      values.json
        ? JSON.stringify({ queue, total, offset, limit, deadLetters: entries }, null, 2)
        : listReport(queue, entries, total, offset),
    );
    return 0;
  }
  if (action === 'show') {
    const entry = await deadLetters.show(selection[0] as string);
    if (!entry) {
      const message = `${COMMAND} show: no dead letter ${selection[0]} in queue ${queue}; '${BIN} dead-letter list' shows them.`;
      if (values.json) print(JSON.stringify({ queue, deadLetter: null }));
      process.stderr.write(`${message}\n`);
      return 1;
    }
    print(values.json ? JSON.stringify({ queue, deadLetter: entry }, null, 2) : showReport(entry));
    return 0;
  }
  // Named ids were confirmed before the engine was opened; --all is counted first.
  if (
    selection === 'all' &&
    !(await confirmed(action, selection, values, () => deadLetters.count(), queue))
  ) {
    process.stderr.write(`Nothing was ${action === 'replay' ? 'replayed' : 'purged'}.\n`);
    return 1;
  }
  const options = { onProgress: progressLine(action, values) };
  const result =
    action === 'replay'
      ? await deadLetters.replay(selection, options)
      : await deadLetters.purge(selection, options);
  print(values.json ? JSON.stringify({ queue, ...result }, null, 2) : changeReport(action, queue, result));
  return result.skipped.length === 0 ? 0 : 1;
}

/** On a terminal, one line rewritten after each page: `Replaying: 300 of 1500 dead letters`. */
function progressLine(action: Action, values: Values) {
  if (values.json || !process.stderr.isTTY) return undefined;
  const verb = action === 'replay' ? 'Replaying' : 'Purging';
  return ({ done, total }: DeadLetterProgress) => {
    process.stderr.write(`\r${verb}: ${done} of ${total} dead letters${done === total ? '\n' : ''}`);
  };
}

/**
 * One event goes ahead; more than one needs --yes, or a y on a terminal. Without a terminal to ask, the
 * command refuses instead of guessing.
 */
async function confirmed(
  action: Action,
  selection: DeadLetterSelection,
  values: Values,
  count: () => Promise<number>,
  queue: string,
): Promise<boolean> {
  if (values.yes || action === 'list' || action === 'show') return true;
  const targeted = selection === 'all' ? await count() : selection.length;
  if (targeted <= 1) return true;
  const what = `${action} ${targeted} dead letters${queue ? ` of queue ${queue}` : ''}`;
  if (!process.stdin.isTTY) {
    throw new UsageError(
      `${COMMAND} ${action}: this would ${what}, and there is no terminal to confirm it on. Pass --yes to ${action} them.`,
    );
  }
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(`${what[0]?.toUpperCase()}${what.slice(1)}? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    prompt.close();
  }
}
