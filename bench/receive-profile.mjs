// Where receive() spends its time with each kind of handler, in process: `npm run build`, then
// `node bench/receive-profile.mjs <dir>`. Profiles (V8's sampler, 100 µs) each in a fresh process: receive()
// with the README's `async` handler, receive() with a handler that returns nothing, and the hand route
// (bench/hand-route.mjs) with each, over the same number of new 1 KiB deliveries (CALLS, default 50,000, signed
// before the profiler starts, after 20,000 unprofiled), and leaves the profiles with their call counts in <dir>
// for `node bench/profile.mjs <dir> [TOP]`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SECRET = 'whsec_bench_receive_profile_7c1e9a3b5d';
const CALLS = Number(process.env.CALLS ?? 50_000);
const WARM = 20_000;
const KINDS = [
  'receive(), async handler',
  'receive(), handler returns nothing',
  'hand route, async handler',
  'hand route, handler returns nothing',
];

async function child(dir, kind) {
  const { createReceiver } = await import('../dist/src/index.js');
  const { handRoute } = await import('./hand-route.mjs');
  const { signedDelivery } = await import('./delivery.mjs');
  let handled = 0;
  const handler = kind.endsWith('async handler')
    ? async () => {
        handled++;
      }
    : () => {
        handled++;
      };
  let call;
  if (kind.startsWith('receive()')) {
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('message.delivered', handler);
    call = ({ body, headers }) => receiver.receive({ method: 'POST', headers, rawBody: body });
  } else {
    const receive = handRoute(SECRET, handler);
    call = ({ body, headers }) => receive(body, headers['webhook-signature']);
  }
  const now = Math.floor(Date.now() / 1000);
  let serial = 0;
  // Signed before the profiler starts, so the profile holds the receiving side only.
  const signed = (count) => Array.from({ length: count }, () => signedDelivery(SECRET, now, ++serial));
  const run = async (deliveries) => {
    for (const delivery of deliveries) await call(delivery);
  };
  await run(signed(WARM));
  const deliveries = signed(CALLS);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  const before = handled;
  await run(deliveries);
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(join(dir, `CPU.0.0.${process.pid}.0.cpuprofile`), JSON.stringify(profile));
  writeFileSync(
    join(dir, `${process.pid}.requests.json`),
    JSON.stringify({ name: kind, requests: handled - before }),
  );
}

if (process.argv[2] === 'child') await child(process.argv[3], process.argv[4]);
else {
  const dir = process.argv[2] ?? 'receive-profiles';
  mkdirSync(dir, { recursive: true });
  for (const kind of KINDS)
    execFileSync(process.execPath, [fileURLToPath(import.meta.url), 'child', dir, kind], {
      stdio: 'inherit',
    });
  console.log(`profiles in ${dir}: node bench/profile.mjs ${dir} 20`);
}
