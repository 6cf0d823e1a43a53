// A secret per tenant against one static secret: `npm run build && node bench/tenants.mjs`.
// receive() per delivery, the full processed path (verify, parse, claim in the memory store, one handler,
// complete), for three receivers side by side in one process: one static `secrets`; a `secrets` lookup whose
// cache holds the tenant (one tenant); and one spread over 1,000 tenants, each delivery for the next tenant
// (every lookup a hit in a cache of 1,000 entries). Each call gets a new 1 KiB event signed before the timed
// loop, so no contender pays for signing or takes the duplicate shortcut. Contenders take turns round by
// round; time is this process's CPU time (CLOCK=wall for wall time). Paired per-round ratios, median reported.
import { createReceiver } from '../dist/src/index.js';
import { signedDelivery } from './delivery.mjs';
import { interleavedRounds, median } from './rounds.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 15);
const BATCH = Number(process.env.BATCH ?? 4000);
const TENANTS = 1000;

const STATIC_SECRET = 'whsec_bench_tenants_static_7a1c3e5b9d2f';
const secretOf = (tenant) => `whsec_bench_tenant_${tenant}_4e6a8c0b2d1f`;
const tenantNames = Array.from({ length: TENANTS }, (_, i) => `tenant-${i}`);

const clock =
  process.env.CLOCK === 'wall'
    ? () => Number(process.hrtime.bigint()) / 1e3
    : () => {
        const { user, system } = process.cpuUsage();
        return user + system;
      };

let handled = 0;
let lookups = 0;
const handle = () => {
  handled++;
};
const tenantOptions = {
  tenant: (request) => request.params.account,
  // A database would answer later: the lookup is async, as an app's is.
  secrets: async (tenant) => {
    lookups++;
    return secretOf(tenant);
  },
};
const staticReceiver = createReceiver({ secrets: STATIC_SECRET }).on('message.delivered', handle);
const oneTenant = createReceiver(tenantOptions).on('message.delivered', handle);
const manyTenants = createReceiver(tenantOptions).on('message.delivered', handle);

let serial = 0;
const expect200 = (outcome) => {
  if (outcome.status !== 200 || outcome.duplicate) throw new Error(`receive answered ${outcome.body}`);
};

const contenders = {
  'static secrets': {
    make: (now) => ({ ...signedDelivery(STATIC_SECRET, now, ++serial), params: {} }),
    receiver: staticReceiver,
  },
  'lookup, 1 tenant, cached': {
    make: (now) => ({
      ...signedDelivery(secretOf('tenant-0'), now, ++serial),
      params: { account: 'tenant-0' },
    }),
    receiver: oneTenant,
  },
  [`lookup, ${TENANTS} tenants, cached`]: {
    make: (now) => {
      const account = tenantNames[++serial % TENANTS];
      return { ...signedDelivery(secretOf(account), now, serial), params: { account } };
    },
    receiver: manyTenants,
  },
};

/** µs per call over one batch of new deliveries. */
async function sample({ make, receiver }) {
  const now = Math.floor(Date.now() / 1000);
  const batch = Array.from({ length: BATCH }, () => make(now));
  const start = clock();
  for (const { body, headers, params } of batch) {
    expect200(await receiver.receive({ method: 'POST', headers, rawBody: body, params }));
  }
  return (clock() - start) / BATCH;
}

const names = Object.keys(contenders);
// Warm-up: fills the caches (1,000 lookups for the spread receiver) and lets the JIT settle.
let lookupsWarm = 0;
const samples = await interleavedRounds(contenders, sample, {
  rounds: ROUNDS,
  afterWarmUp: () => {
    lookupsWarm = lookups;
  },
});

console.log(
  `node ${process.version}, ${process.env.CLOCK === 'wall' ? 'wall' : 'CPU'} time, ${ROUNDS} rounds × ${BATCH} new 1 KiB events, median µs per receive()\n`,
);
for (const name of names)
  console.log(`  ${name.padEnd(30)} ${median(samples[name]).toFixed(2).padStart(7)} µs`);
console.log(
  `  (${handled.toLocaleString('en-US')} events handled; lookups: ${lookupsWarm} while warming up, ${lookups - lookupsWarm} in the timed rounds)`,
);
const [base, ...looked] = names;
for (const name of looked) {
  const ratio = median(samples[name].map((us, round) => us / samples[base][round]));
  console.log(`time ratio ${name} / static secrets (median of per-round ratios): ${ratio.toFixed(2)}×`);
}
