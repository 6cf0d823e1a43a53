import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Consumer, DEPENDENCIES, installPackedPackage } from '../support/packed-package.js';

/**
 * An app that runs with `node --enable-source-maps` sees the package's frames at the TypeScript files its source
 * maps name: those files must be in the installed package, with the line the frame points at.
 */
let consumer: Consumer;
beforeAll(async () => {
  consumer = await installPackedPackage({ only: DEPENDENCIES });
}, 180_000);
afterAll(() => consumer?.remove());

/** The package's frames of a stack: file, line and column, as Node prints them once mapped. */
function packageFrames(stack: string): { file: string; line: number; column: number }[] {
  const frames = [
    ...stack.matchAll(/\(?(\/[^\s()]*\/node_modules\/messaging-webhooks\/[^\s():]+):(\d+):(\d+)\)?/g),
  ];
  return frames.map(([, file, line, column]) => ({
    file: file as string,
    line: Number(line),
    column: Number(column),
  }));
}

describe('stack traces through the installed package', () => {
  it('name TypeScript files that exist, at the line that threw', () => {
    const script = [
      `import { createReceiver } from 'messaging-webhooks';`,
      `import { webhookMiddleware } from 'messaging-webhooks/koa';`,
      `try { createReceiver({}); } catch (error) { console.log(error.stack); }`,
      `console.log('----');`,
      `try { webhookMiddleware(undefined); } catch (error) { console.log(error.stack); }`,
    ].join('\n');
    const output = execFileSync(
      process.execPath,
      ['--enable-source-maps', '--input-type=module', '-e', script],
      {
        cwd: consumer.dir,
        encoding: 'utf8',
      },
    );
    const [core, adapter] = output.split('----\n').map(packageFrames);
    expect(core?.[0]?.file).toMatch(/\/src\/.+\.ts$/);
    expect(adapter?.map((frame) => frame.file)).toContainEqual(expect.stringMatching(/\/adapters\/koa\.ts$/));
    for (const frames of [core ?? [], adapter ?? []]) {
      for (const { file, line, column } of frames) {
        expect(existsSync(file), `${file} is not in the installed package`).toBe(true);
        const text = readFileSync(file, 'utf8').split('\n')[line - 1] ?? '';
        expect(text.length, `${file}:${line} is shorter than column ${column}`).toBeGreaterThanOrEqual(
          column,
        );
      }
      // The innermost frame is where the error was made.
      const first = frames[0];
      if (first)
        expect(readFileSync(first.file, 'utf8').split('\n')[first.line - 1]).toMatch(/throw|Error\(/);
    }
  }, 60_000);
});
