// What the receiver leaves for the garbage collector, against the hand route with the same guarantees:
// `npm run build && node bench/promotion.mjs`. Each contender runs in a process of its own (a fresh heap) with
// 32 deliveries in flight, as concurrent requests are on a server, and V8's --trace-gc-nvp reports every minor
// GC: the bytes still alive (survived) and moved to the old generation (promoted) per 1,000 calls of a measured
// window, after a warm-up. Promoted bytes are what major GCs later pay for. Env: ROUNDS (3), CALLS (40000).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { signedDelivery } from './delivery.mjs';

const SECRET = 'whsec_bench_promotion_7d2e4f6a8b0c';
const IN_FLIGHT = 32;
const BATCH = 4000;
const CALLS = Number(process.env.CALLS ?? 40_000);

const contenders = {
  'receiver.receive()': async () => {
    const { createReceiver } = await import('../dist/src/index.js');
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('message.delivered', () => undefined);
    return ({ body, headers }) => receiver.receive({ method: 'POST', headers, rawBody: body });
  },
  'constructEvent + zod + Map claim + p-queue + complete (by hand)': async () => {
    const { handRoute } = await import('./hand-route.mjs');
    const receive = handRoute(SECRET, () => undefined);
    return ({ body, headers }) => receive(body, headers['webhook-signature']);
  },
};

let serial = 0;
const delivery = (now) => signedDelivery(SECRET, now, ++serial);

async function calls(call, batches) {
  for (const batch of batches) {
    for (let i = 0; i < batch.length; i += IN_FLIGHT)
      await Promise.all(batch.slice(i, i + IN_FLIGHT).map(call));
  }
}

/** One contender in this process: warm-up, then the window, reported in the clock of V8's GC lines. */
async function run(name) {
  const call = await contenders[name]();
  const now = Math.floor(Date.now() / 1000);
  const make = () =>
    Array.from({ length: CALLS / BATCH }, () => Array.from({ length: BATCH }, () => delivery(now)));
  await calls(call, make());
  // Signed before the window: only the contender allocates in it.
  const batches = make();
  const start = performance.now();
  const cpu = process.cpuUsage();
  await calls(call, batches);
  const used = process.cpuUsage(cpu);
  // On stdout with V8's lines: they are matched by time, so their order does not matter.
  process.stdout.write(
    `${JSON.stringify({ start, end: performance.now(), cpu: (used.user + used.system) / CALLS })}\n`,
  );
}

function measure(name) {
  const stdout = execFileSync(
    process.execPath,
    ['--trace-gc-nvp', fileURLToPath(import.meta.url), 'run', name],
    {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const window = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{')) ?? 'null');
  if (!window) throw new Error(`the ${name} run reported no window`);
  return { stdout, window };
}

function totals(stdout, window) {
  const sum = { survived: 0, promoted: 0, minor: 0, major: 0 };
  for (const line of stdout.split('\n')) {
    const at = /\s(\d+) ms: /.exec(line);
    if (!at || Number(at[1]) < window.start || Number(at[1]) > window.end) continue;
    if (/ gc=s /.test(line)) {
      sum.minor++;
      sum.survived += Number(/ new_space_survived=(\d+)/.exec(line)?.[1] ?? 0);
      sum.promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
    } else if (/ gc=(mc|ms) /.test(line)) sum.major++;
  }
  return sum;
}

async function drive() {
  const rounds = Number(process.env.ROUNDS ?? 3);
  const names = Object.keys(contenders);
  const rows = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 ? [...names].reverse() : names) {
      const { stdout, window } = measure(name);
      rows[name].push({ ...totals(stdout, window), cpu: window.cpu });
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const perThousand = (bytes) => `${(((bytes / CALLS) * 1000) / 1024).toFixed(0)} KiB`;
  console.log(
    `bench/promotion: ${CALLS} calls per window, ${IN_FLIGHT} in flight, 1 KiB events, a process per run; ` +
      `medians of ${rounds} runs. Node ${process.version}\n`,
  );
  console.log(
    '| contender | survived minor GCs per 1,000 calls | promoted per 1,000 calls | major GCs | CPU µs/call |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const name of names) {
    const runs = rows[name];
    console.log(
      `| ${name} | ${perThousand(median(runs.map((r) => r.survived)))} | ${perThousand(median(runs.map((r) => r.promoted)))} | ` +
        `${median(runs.map((r) => r.major))} | ${median(runs.map((r) => r.cpu)).toFixed(2)} |`,
    );
  }
}

if (process.argv[2] === 'run') await run(process.argv[3]);
else await drive();
