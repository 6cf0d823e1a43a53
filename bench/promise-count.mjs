// Promises one delivery makes: `npm run build && node bench/promise-count.mjs [dist-dir]`.
// Counts the PROMISE inits of an async_hooks hook over many receive() calls (memory store, the processed path,
// a new 1 KiB event each) and over the hand route (bench/hand-route.mjs), with the README's `async` handler and
// with one that returns nothing; prints promises per delivery. A count, not a time: it shows what a change in
// the walk made or saved, independent of the machine's load. dist-dir defaults to this checkout's dist/.
import { createHook } from 'node:async_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { signedDelivery } from './delivery.mjs';
import { ANSWERS, handRoute } from './hand-route.mjs';

const SECRET = 'whsec_bench_promise_count_3b5d7f9a1c2e4a6c';
const CALLS = 2000;
const dist = resolve(process.argv[2] ?? new URL('../dist', import.meta.url).pathname);
const { createReceiver } = await import(pathToFileURL(resolve(dist, 'src/index.js')).href);

let serial = 0;
let promises = 0;
const hook = createHook({
  init(_id, type) {
    if (type === 'PROMISE') promises++;
  },
});

const kinds = { 'async handler': async () => {}, 'handler returns nothing': () => {} };

async function perDelivery(receive) {
  const now = Math.floor(Date.now() / 1000);
  const batch = Array.from({ length: CALLS }, () => signedDelivery(SECRET, now, ++serial));
  for (const delivery of batch.splice(0, 200)) await receive(delivery);
  promises = 0;
  hook.enable();
  for (const delivery of batch) await receive(delivery);
  hook.disable();
  return promises / batch.length;
}

for (const [kind, handler] of Object.entries(kinds)) {
  const receiver = createReceiver({ secrets: SECRET });
  receiver.on('message.delivered', handler);
  const ours = await perDelivery(async ({ body, headers }) => {
    const outcome = await receiver.receive({ method: 'POST', headers, rawBody: body });
    if (outcome.status !== 200 || outcome.duplicate) throw new Error(`receive answered ${outcome.body}`);
  });
  const hand = handRoute(SECRET, handler);
  const theirs = await perDelivery(async ({ body, headers }) => {
    if ((await hand(body, headers['webhook-signature'])) !== ANSWERS.received) throw new Error('hand route');
  });
  // Each side's loop awaits one async call per delivery: those are counted in both.
  console.log(
    `${kind}: receive() ${ours.toFixed(1)} promises per delivery, the hand route ${theirs.toFixed(1)}`,
  );
}
