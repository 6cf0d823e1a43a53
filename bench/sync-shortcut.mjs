// Does runOne's shortcut pay? `npm run build && node bench/sync-shortcut.mjs`.
// runOne (src/claims/claim.ts) calls a handler through callUser: the handler's own promise when it returned
// one, nothing to wait for when it returned at once (the shortcut). This bench copies the build to
// tmp/sync-shortcut/ with runOne as an async function that awaits whatever the handler returned, then times
// receive() of both builds in one process, interleaved round by round: with a handler that returns nothing and
// with the README's `async` handler. Each call gets a new 1 KiB event (memory store, processed path).
// Time is this process's CPU time; paired per-round ratios, median reported. Env: ROUNDS (21), BATCH (4000).
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newDeliveries } from './delivery.mjs';
import { cpuPerItem, interleavedRounds, median } from './rounds.mjs';

const SECRET = 'whsec_bench_sync_shortcut_7a1c3e5f9b2d4f6a';
const ROUNDS = Number(process.env.ROUNDS ?? 21);
const BATCH = Number(process.env.BATCH ?? 4000);

const root = fileURLToPath(new URL('..', import.meta.url));
// Under the checkout (tmp/ is ignored), so the copy resolves the same node_modules as dist/.
const copy = join(root, 'tmp', 'sync-shortcut', 'dist');

const RUN_ONE = /(?:async )?function runOne\(handler, event, ctx\) \{\n[^}]*\n\}/;
// runOne without the shortcut: an async function that awaits what the handler returned, nothing included.
const AWAITING = `async function runOne(handler, event, ctx) {
  await handler(event, ctx);
}`;

/** dist/ copied with the awaiting runOne; fails unless exactly one runOne was replaced. */
function buildWithoutShortcut() {
  rmSync(copy, { recursive: true, force: true });
  cpSync(join(root, 'dist'), copy, { recursive: true });
  const chunks = join(copy, 'chunks');
  let replaced = 0;
  for (const file of readdirSync(chunks).filter((name) => name.endsWith('.js'))) {
    const path = join(chunks, file);
    const text = readFileSync(path, 'utf8');
    if (!RUN_ONE.test(text)) continue;
    writeFileSync(path, text.replace(RUN_ONE, AWAITING));
    replaced++;
  }
  if (replaced !== 1) throw new Error(`runOne found in ${replaced} chunks of dist/, expected 1`);
}

buildWithoutShortcut();
const withShortcut = await import(join(root, 'dist', 'src', 'index.js'));
const awaiting = await import(join(copy, 'src', 'index.js'));

let handled = 0;
const kinds = {
  'handler returns nothing': () => {
    handled++;
  },
  'async handler': async () => {
    handled++;
  },
};

const contenders = {};
for (const [kind, handler] of Object.entries(kinds)) {
  for (const [build, { createReceiver }] of [
    ['with the shortcut', withShortcut],
    ['without (runOne awaits)', awaiting],
  ]) {
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('message.delivered', handler);
    contenders[`${kind}, ${build}`] = async (batch) => {
      for (const { body, headers } of batch) {
        const outcome = await receiver.receive({ method: 'POST', headers, rawBody: body });
        if (outcome.status !== 200 || outcome.duplicate) throw new Error(`receive answered ${outcome.body}`);
      }
    };
  }
}

/** CPU µs per call over one batch of new deliveries, signed before the timed loop. */
const sample = (run) => cpuPerItem(run, newDeliveries(SECRET, BATCH));

const samples = await interleavedRounds(contenders, sample, { rounds: ROUNDS });
console.log(
  `node ${process.version}, CPU time, ${ROUNDS} rounds × ${BATCH} new 1 KiB events, median µs per call\n`,
);
for (const [name, values] of Object.entries(samples)) {
  const sorted = [...values].sort((a, b) => a - b);
  const range = `${sorted[0].toFixed(2)}–${sorted.at(-1).toFixed(2)}`;
  console.log(`  ${name.padEnd(52)} ${median(values).toFixed(2).padStart(6)} µs  (${range})`);
}
for (const kind of Object.keys(kinds)) {
  const mine = samples[`${kind}, with the shortcut`];
  const theirs = samples[`${kind}, without (runOne awaits)`];
  const ratios = mine.map((us, round) => theirs[round] / us);
  const wins = ratios.filter((ratio) => ratio > 1).length;
  console.log(
    `${kind}: without / with = ${median(ratios).toFixed(3)}× (median of per-round ratios; the shortcut faster in ${wins} of ${ratios.length} rounds)`,
  );
}
console.log(`  (${handled.toLocaleString('en-US')} events handled)`);
rmSync(join(root, 'tmp', 'sync-shortcut'), { recursive: true, force: true });
