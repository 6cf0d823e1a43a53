import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, root } from '../support/build.js';

/*
 * What a Cloudflare Worker ships stays within its budget: bench/bundle-size.mjs bundles the Worker of
 * createReceiver + the Fetch adapter with the default events as wrangler does (esbuild, minified) and checks
 * its gzipped size against bench/bundle-budget.json. Over budget, the check names what grew.
 */
function check(budget?: number) {
  const env = { ...process.env, ...(budget === undefined ? {} : { BUNDLE_BUDGET_GZIP: String(budget) }) };
  const run = spawnSync(process.execPath, ['bench/bundle-size.mjs', '--check'], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the Worker bundle', () => {
  beforeAll(ensureBuilt, 180_000);

  it('stays within its gzip budget', () => {
    const { status, output } = check();
    expect(status, output).toBe(0);
    expect(output).toMatch(/within budget: [\d.]+ KB gzip of 40\.0 KB/);
  });

  it('fails the check past the budget, saying by how much and what grew', () => {
    const { status, output } = check(1024);
    expect(status).toBe(1);
    expect(output).toMatch(/OVER BUDGET: [\d.]+ KB gzip, budget 1\.0 KB\./);
    expect(output).toMatch(
      /Nothing grew since the breakdown in bench\/bundle-budget\.json was recorded|What grew/,
    );
  });
});
