// Cold start in Node: `npm run build && node bench/cold-start.mjs`. Each sample is a fresh process
// (bench/edge/cold-child.mjs) that imports one contender and answers one delivery: the time of the import()
// and of the first delivery after it (messaging-webhooks: createReceiver, the README's async handler, the Fetch adapter, a
// signed Request answered 200; the anchors: standardwebhooks' verify, stripe-node's constructEvent), in Node and,
// for the Fetch path and standardwebhooks, in Deno (the devDependency's binary, packages from node_modules).
// The Express rows answer theirs over a real socket (Node's own IncomingMessage and ServerResponse): the README's
// Express app, listening, one GET of another path answered before the clock. "express hand route" is the same
// app answering the same delivery with node:crypto alone and no package: Express's and Node's HTTP share of a
// first answer, which an Express row's first answer less this one leaves as the package's own. "fetch hand
// route" is the same for the Fetch path: the Request answered with node:crypto alone.
// Contenders take turns run by run, so background load hits them alike; medians of RUNS (default 21) runs.
// ONLY (parts of row names, separated by |: the names have commas) runs only the rows whose names contain one.
// Wall time and the child's CPU time (user + system) both: on a shared machine wall time mostly measures
// the other processes, CPU time what the contender itself costs.
// The package's own share of an import is measured directly: "own share" rows import the packages the built
// entries import (zod, p-queue) first, untimed, then time the package's files alone.
// Beside them, what explains the numbers: zod/mini imported alone (the floor of any import that loads the
// package's schemas), the same contenders bundled by esbuild into one file each (Node's ESM loader pays per
// file: resolution, read and compile), and, where Node has it (22.1 and later), the package with
// NODE_COMPILE_CACHE set to a cache warmed once before the runs.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import Stripe from 'stripe';

const RUNS = Number(process.env.RUNS ?? 21);
const child = fileURLToPath(new URL('edge/cold-child.mjs', import.meta.url));
const deno = fileURLToPath(new URL('../node_modules/.bin/deno', import.meta.url));
const DENO = [
  deno,
  'run',
  '--quiet',
  '--no-lock',
  '--node-modules-dir=manual',
  '--allow-read',
  '--allow-env',
];
/** Each row: the contender cold-child.mjs runs, and the runtime that runs it (Node, then Deno for the Fetch path). */
const root = fileURLToPath(new URL('..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'cold-start-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
const compileCache = { NODE_COMPILE_CACHE: join(scratch, 'compile-cache') };
const hasCompileCache = typeof module.enableCompileCache === 'function';

const ROWS = [
  ...[
    'messaging-webhooks (root + /fetch)',
    'messaging-webhooks (root + /express)',
    'messaging-webhooks (root + /express), own share',
    'messaging-webhooks (root + /fetch), own share',
    'express hand route (node:crypto, no package)',
    'fetch hand route (node:crypto, no package)',
    'standardwebhooks',
    'stripe-node webhooks',
    'zod/mini alone',
    'messaging-webhooks, esbuild bundle',
    'stripe-node webhooks, esbuild bundle',
  ].map((contender) => ({ name: contender, contender, command: [process.execPath] })),
  ...(hasCompileCache
    ? ['messaging-webhooks (root + /fetch)', 'stripe-node webhooks'].map((contender) => ({
        name: `${contender}, NODE_COMPILE_CACHE`,
        contender,
        command: [process.execPath],
        env: compileCache,
      }))
    : []),
  ...['messaging-webhooks (root + /fetch)', 'standardwebhooks'].map((contender) => ({
    name: `${contender} in Deno`,
    contender,
    command: DENO,
  })),
];

/** The app of each bundled contender as one ESM file for Node, every dependency inlined (not minified). */
async function bundle(name, contents) {
  await build({
    stdin: { contents, resolveDir: root, sourcefile: `${name}-entry.mjs` },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outfile: join(scratch, `${name}.mjs`),
    logLevel: 'silent',
  });
}
await bundle(
  'messaging-webhooks',
  "export { createReceiver } from './dist/src/index.js'; export { createFetchHandler } from './dist/adapters/fetch.js';",
);
await bundle('stripe', "export { default } from 'stripe';");
const ONLY = process.env.ONLY?.split('|').map((part) => part.trim());
if (ONLY) ROWS.splice(0, ROWS.length, ...ROWS.filter((row) => ONLY.some((part) => row.name.includes(part))));
const CONTENDERS = ROWS.map((row) => row.name);

function input() {
  const secret = `whsec_${Buffer.from('cold-start-bench-secret-0123456789').toString('base64')}`;
  const now = Math.floor(Date.now() / 1000);
  const id = `evt_cold_${now}`;
  const event = {
    id,
    type: 'message.delivered',
    created_at: new Date().toISOString(),
    data: { message_id: 'msg_cold', to: '+15551234567', operator: 'op_cold' },
  };
  const body = JSON.stringify(event);
  const signature = `t=${now},v1=${createHmac('sha256', secret).update(`${now}.${body}`).digest('hex')}`;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const standard = createHmac('sha256', key).update(`${id}.${now}.${body}`).digest('base64');
  const webhookHeaders = {
    'webhook-id': id,
    'webhook-timestamp': String(now),
    'webhook-signature': `v1,${standard}`,
  };
  const stripeHeader = Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: now });
  return JSON.stringify({ secret, body, signature, webhookHeaders, stripeHeader });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const COLUMNS = ['importMs', 'importCpuMs', 'firstMs', 'firstCpuMs'];
const samples = Object.fromEntries(
  CONTENDERS.map((name) => [
    name,
    Object.fromEntries([...COLUMNS, 'totalCpuMs'].map((column) => [column, []])),
  ]),
);
function sample(command, contender, env) {
  const [file, ...args] = command;
  const out = execFileSync(file, [...args, child, contender], { env, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1));
}
// Fills the compile cache, so the NODE_COMPILE_CACHE rows measure the starts after the first.
for (const row of ROWS.filter((candidate) => candidate.env)) {
  sample(row.command, row.contender, { ...process.env, COLD_START_INPUT: input(), ...row.env });
}
for (let run = 0; run < RUNS; run++) {
  const shared = { ...process.env, COLD_START_INPUT: input(), COLD_START_BUNDLES: scratch };
  for (const { name, contender, command, env } of ROWS) {
    const times = sample(command, contender, { ...shared, ...env });
    for (const column of COLUMNS) samples[name][column].push(times[column] ?? Number.NaN);
    samples[name].totalCpuMs.push((times.importCpuMs ?? Number.NaN) + (times.firstCpuMs ?? Number.NaN));
  }
}

const ms = (value) => (Number.isNaN(value) ? '—' : `${value.toFixed(1)} ms`);
const denoVersion = execFileSync(deno, ['--version'], { encoding: 'utf8' }).split('\n')[0];
console.log(
  `Cold start in Node ${process.version} and ${denoVersion}, fresh process per sample, median of ${RUNS} runs:`,
);
const header = ['import() wall', 'import() CPU', 'first wall', 'first CPU', 'both CPU'];
console.log(`  ${'contender'.padEnd(56)} ${header.map((title) => title.padStart(14)).join('')}`);
for (const name of CONTENDERS) {
  const cells = [...COLUMNS, 'totalCpuMs'].map((column) => ms(median(samples[name][column])).padStart(14));
  console.log(`  ${name.padEnd(56)} ${cells.join('')}`);
}
