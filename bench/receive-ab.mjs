// receive() of another build against this checkout's, in one process: `npm run build && node
// bench/receive-ab.mjs <other-dist>` (say a copy of main's dist/ under tmp/, which resolves this checkout's
// node_modules). Both builds and the hand route (bench/hand-route.mjs) take turns round by round, each with the
// README's `async` handler and with a handler that returns nothing, a new 1 KiB event per call (memory store,
// processed path); time is this process's CPU time, ratios are medians of per-round ratios against the hand route.
// Env: ROUNDS (21), BATCH (4000).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { newDeliveries } from './delivery.mjs';
import { ANSWERS, handRoute } from './hand-route.mjs';
import { cpuPerItem, interleavedRounds, median } from './rounds.mjs';

const SECRET = 'whsec_bench_receive_ab_5e1f3a7c9b2d4e6f';
const ROUNDS = Number(process.env.ROUNDS ?? 21);
const BATCH = Number(process.env.BATCH ?? 4000);
if (!process.argv[2]) throw new Error('usage: node bench/receive-ab.mjs <other-dist>');
const builds = {
  other: await import(pathToFileURL(resolve(process.argv[2], 'src/index.js')).href),
  this: await import('../dist/src/index.js'),
};

let handled = 0;
const kinds = {
  'async handler': async () => {
    handled++;
  },
  'handler returns nothing': () => {
    handled++;
  },
};
const contenders = {};
for (const [kind, handler] of Object.entries(kinds)) {
  for (const [build, lib] of Object.entries(builds)) {
    const receiver = lib.createReceiver({ secrets: SECRET });
    receiver.on('message.delivered', handler);
    contenders[`${build} build, ${kind}`] = async (batch) => {
      for (const { body, headers } of batch) {
        const outcome = await receiver.receive({ method: 'POST', headers, rawBody: body });
        if (outcome.status !== 200 || outcome.duplicate) throw new Error(`receive answered ${outcome.body}`);
      }
    };
  }
  const hand = handRoute(SECRET, handler);
  contenders[`hand route, ${kind}`] = async (batch) => {
    for (const { body, headers } of batch) {
      if ((await hand(body, headers['webhook-signature'])) !== ANSWERS.received)
        throw new Error('hand route');
    }
  };
}

/** CPU µs per call over one batch of new deliveries, signed before the timed loop. */
const sample = (run) => cpuPerItem(run, newDeliveries(SECRET, BATCH));

const samples = await interleavedRounds(contenders, sample, { rounds: ROUNDS });
console.log(`node ${process.version}, CPU time, ${ROUNDS} rounds × ${BATCH}; ${handled} events handled`);
for (const kind of Object.keys(kinds)) {
  const hand = samples[`hand route, ${kind}`];
  const line = Object.keys(builds).map((build) => {
    const ours = samples[`${build} build, ${kind}`];
    const ratio = median(hand.map((h, i) => h / ours[i]));
    return `${build} build ${median(ours).toFixed(2)} µs (${ratio.toFixed(2)}× of the hand route)`;
  });
  console.log(`${kind}: hand route ${median(hand).toFixed(2)} µs; ${line.join('; ')}`);
}
