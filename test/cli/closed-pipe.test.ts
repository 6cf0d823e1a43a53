import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, ensureBuilt, root } from '../support/build.js';
import { runCli, SECRET, startServer, type TestServer } from '../support/child-processes.js';
import { gate } from '../support/gate.js';

beforeAll(ensureBuilt, 180_000);

interface Cut {
  /** Resolves with the first chunk of stdout, once the pipe is closed behind it. */
  cut: Promise<string>;
  /** The exit code and everything on stderr. */
  ended: Promise<{ code: number | null; signal: string | null; stderr: string }>;
}

/**
 * The CLI with its stdout a real pipe that the reader closes, as `| head -1` does: at once (`afterLines: 0`,
 * before the command wrote anything) or once a first chunk arrived.
 */
function cliIntoClosingPipe(args: string[], afterLines: 0 | 1, input = ''): Cut {
  const env = { ...process.env, NO_COLOR: '1', WEBHOOK_SECRET: SECRET };
  const child = spawn(process.execPath, [cliPath, ...args], { cwd: root, env });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  child.stdin.end(input);
  const cut = new Promise<string>((resolve) => {
    if (afterLines === 0) {
      child.stdout.destroy();
      resolve('');
      return;
    }
    child.stdout.once('data', (chunk: Buffer) => {
      child.stdout.destroy();
      resolve(String(chunk));
    });
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const ended = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    }),
  );
  return { cut, ended };
}

describe('a reader that closes the pipe early', () => {
  // Answers each delivery only once the test opens its gate: the pipe is closed before the answer is printed.
  let held = gate();
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((req, res) => {
      req.resume();
      req.on('end', () => {
        void held.opened.then(() =>
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
        );
      });
    });
  });
  afterAll(() => server.close());

  it('ends send quietly when the pipe closes after its first line', async () => {
    held = gate();
    const { cut, ended } = cliIntoClosingPipe(['send', server.url], 1);
    expect(await cut).toMatch(/^POST /);
    held.open();
    expect(await ended).toEqual({ code: 0, signal: null, stderr: '' });
  });

  it('ends listen quietly when the pipe closes and a delivery comes in', async () => {
    const { cut, ended } = cliIntoClosingPipe(['listen', '--port', '0'], 1);
    const [, base] = (await cut).match(/Listening on (http:\/\/\S+)/) ?? [];
    expect(base).toBeDefined();
    // The delivery's line is the first write after the pipe closed; listen ends there, answered or not.
    await runCli(['send', `${base}webhooks`, '--secret', SECRET]);
    expect(await ended).toEqual({ code: 0, signal: null, stderr: '' });
  });

  const body = '{"id":"evt_pipe","type":"message.delivered"}';
  it.each([
    { command: '--help', args: ['--help'] },
    { command: 'sign', args: ['sign'], input: body },
    { command: 'send', args: ['send', 'URL'] },
    // Its checks fail (this server accepts a forged delivery): it keeps the code it had when it wrote.
    { command: 'check', args: ['check', 'URL', '--json'], code: 1 },
    { command: 'simulate', args: ['simulate', 'URL', '--events', '2'] },
    { command: 'emulate', args: ['emulate', '--port', '0'] },
    { command: 'dead-letter', args: ['dead-letter', '--help'] },
  ])('ends $command quietly when the pipe is closed before it writes', async ({ args, input, code = 0 }) => {
    held = gate();
    held.open();
    const { ended } = cliIntoClosingPipe(
      args.map((arg) => (arg === 'URL' ? server.url : arg)),
      0,
      input,
    );
    expect(await ended).toEqual({ code, signal: null, stderr: '' });
  });
});
