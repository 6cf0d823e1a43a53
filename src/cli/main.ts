#!/usr/bin/env node
import { createRequire } from 'node:module';
import { BIN, type Command, HelpRequested, UsageError } from './args.js';
import { check } from './check.js';
import { deadLetter } from './dead-letter.js';
import { emulate } from './emulate.js';
import { listen } from './listen.js';
import { endQuietlyWhenReaderLeaves, escapeLines } from './output.js';
import { reconcile } from './reconcile.js';
import { send } from './send.js';
import { sign } from './sign.js';
import { simulate } from './simulate.js';

const commands: Command[] = [sign, send, check, simulate, listen, emulate, deadLetter, reconcile];

const help = `Usage: ${BIN} <command> [options]

Test a webhook endpoint of the Messaging Service locally and before go-live; handle the events a durable
queue's workers dead-lettered.

Commands:
${commands.map((command) => `  ${command.name.padEnd(13)}${command.summary}`).join('\n')}

Run '${BIN} <command> --help' for a command's options, '${BIN} --version' for the version. The secret can come from WEBHOOK_SECRET
instead of --secret. Exit codes: 0 success, 1 a check or delivery failed, 2 a usage mistake.`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? process.stderr : process.stdout).write(`${help}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    // The package's own manifest, through its exports: the same path from the sources and from dist/.
    const { version } = createRequire(import.meta.url)('messaging-webhooks/package.json') as {
      version: string;
    };
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    const what = name.startsWith('-') ? `unknown option '${name}'` : `unknown command '${name}'`;
    throw new UsageError(
      `${what}. Commands: ${commands.map((c) => c.name).join(', ')}; see '${BIN} --help'.`,
    );
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (!(error instanceof HelpRequested)) throw error;
    process.stdout.write(`${command.help}\n`);
    return 0;
  }
}

endQuietlyWhenReaderLeaves();
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // Messages only, never a stack trace: every expected failure already says what to do.
    const message = error instanceof Error ? error.message : String(error);
    // An engine's or an endpoint's words may be in it: shown, never acted on by the terminal.
    process.stderr.write(`${BIN}: ${escapeLines(message)}\n`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
