import fs, { appendFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { inject } from 'vitest';

/**
 * Setup file (vitest.config.ts setupFiles): copies everything this test worker writes to the console,
 * stdout and stderr, and every line a test logger receives, into one file per worker. The global setup
 * (secret-scan.ts) scans those files for known test secrets when the whole run ends.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    logScanDir: string;
  }
}

const file = join(inject('logScanDir'), `worker-${process.pid}.log`);

/** Adds text to this worker's capture; test loggers call it for each line they receive. */
export function captureLogText(text: string): void {
  appendFileSync(file, `${text}\n`);
}

function asText(chunk: unknown): string {
  if (typeof chunk === 'string') return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk).toString('utf8');
  return String(chunk);
}

// The process outlives one test file's module graph: patch once per process, or writes are copied twice.
const PATCHED = Symbol.for('messaging-webhooks.log-capture');
const state = process as unknown as Record<symbol, boolean>;
if (!state[PATCHED]) {
  state[PATCHED] = true;
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      captureLogText(asText(chunk));
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}

// Writes to file descriptors 1 and 2 with fs (fs.writeSync(1, …), sonic-boom destinations) bypass process.stdout.
const FS_PATCHED = Symbol.for('messaging-webhooks.log-capture.fs');
const fsState = fs as unknown as Record<symbol, boolean>;
if (!fsState[FS_PATCHED]) {
  fsState[FS_PATCHED] = true;
  const { write, writeSync } = fs;
  const isStdio = (fd: unknown) => fd === 1 || fd === 2;
  fs.writeSync = ((fd: number, data: unknown, ...rest: unknown[]) => {
    if (isStdio(fd)) captureLogText(asText(data));
    return (writeSync as (...args: unknown[]) => number)(fd, data, ...rest);
  }) as typeof fs.writeSync;
  fs.write = ((fd: number, data: unknown, ...rest: unknown[]) => {
    if (isStdio(fd)) captureLogText(asText(data));
    return (write as (...args: unknown[]) => void)(fd, data, ...rest);
  }) as typeof fs.write;
  syncBuiltinESMExports();
}

// Vitest gives each test file its own console (it forwards to the reporter, not to process.stdout).
const CONSOLE_PATCHED = Symbol.for('messaging-webhooks.log-capture.console');
const consoleState = console as unknown as Record<symbol, boolean>;
if (!consoleState[CONSOLE_PATCHED]) {
  consoleState[CONSOLE_PATCHED] = true;
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir'] as const) {
    const original = console[method].bind(console) as (...args: unknown[]) => void;
    console[method] = (...args: unknown[]) => {
      captureLogText(args.map((arg) => (typeof arg === 'string' ? arg : safeStringify(arg))).join(' '));
      original(...args);
    };
  }
}

function safeStringify(value: unknown): string {
  if (value instanceof Error)
    return `${value.name}: ${value.message}\n${value.stack ?? ''}\n${safeStringify(value.cause ?? '')}`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
