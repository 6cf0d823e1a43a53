import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Consumer, installPackedPackage } from '../support/packed-package.js';

let consumer: Consumer;
beforeAll(async () => {
  consumer = await installPackedPackage({ only: [] });
}, 180_000);
afterAll(() => consumer?.remove());

/**
 * What npm runs, or asks the user to approve (npm 11's install-scripts warning), when an app installs the package
 * from its tarball or a registry: the package must ship none of them.
 */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'preprepare', 'prepare', 'postprepare'];

describe('the packed package.json', () => {
  it('has no script that runs when an app installs it', () => {
    const manifest = JSON.parse(
      readFileSync(join(consumer.dir, 'node_modules/messaging-webhooks/package.json'), 'utf8'),
    ) as { scripts?: Record<string, string> };
    const shipped = Object.keys(manifest.scripts ?? {});
    expect(shipped.filter((name) => INSTALL_SCRIPTS.includes(name))).toEqual([]);
  });
});
