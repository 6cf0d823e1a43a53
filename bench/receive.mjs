// The whole receiver in process against stripe-node's constructEvent: `npm run build && node bench/receive.mjs`.
// receive() takes its full processed path for every call (request checks, verify, parse, claim in the memory
// store, p-queue, one handler, complete, outcome): each call gets a new 1 KiB event, signed before the timed
// loop starts, so neither contender pays for signing and none takes the duplicate shortcut.
// Every receiver and hand route registers the README's `async` handler; receive() and the hand route also run
// with a handler that returns nothing, the second case.
// Contenders take turns round by round on the same batch of deliveries; time is this process's CPU time
// (CLOCK=wall for wall time). Paired per-round ratios, median reported.
import { context, SpanKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import PQueue from 'p-queue';
import Stripe from 'stripe';
import { createLambdaHandler } from '../dist/adapters/aws-lambda.js';
import { createReceiver, createVerifier, defaultEvents, MemoryDedupeStore } from '../dist/src/index.js';
import { openTelemetry } from '../dist/src/observability/opentelemetry.js';
import { signedDelivery } from './delivery.mjs';
import { ANSWERS, handRoute } from './hand-route.mjs';
import { createEventParser, utf8Text } from './internals.mjs';
import { interleavedRounds, median } from './rounds.mjs';

const SECRET = 'whsec_bench_receive_5e1f3a7c9b2d4e6f8a0b';
const ROUNDS = Number(process.env.ROUNDS ?? 15);
const BATCH = Number(process.env.BATCH ?? 4000);

let serial = 0;
const delivery = (now) => signedDelivery(SECRET, now, ++serial);

const clock =
  process.env.CLOCK === 'wall'
    ? () => Number(process.hrtime.bigint()) / 1e3
    : () => {
        const { user, system } = process.cpuUsage();
        return user + system;
      };

// The handlers: the README's `async` handler (the main case) and one that returns nothing (the second).
let handled = 0;
const asyncHandler = async () => {
  handled++;
};
const plainHandler = () => {
  handled++;
};
const receiver = createReceiver({ secrets: SECRET });
receiver.on('message.delivered', asyncHandler);
const plainReceiver = createReceiver({ secrets: SECRET });
plainReceiver.on('message.delivered', plainHandler);
// Tracing on, no tracer provider registered (@opentelemetry/api's no-op): what tracing costs an app that
// has not set up an SDK yet.
const traced = createReceiver({ secrets: SECRET, tracing: openTelemetry() });
traced.on('message.delivered', asyncHandler);

// Tracing on with an SDK whose sampler drops every delivery (ParentBased(TraceIdRatioBased(0))) and the context
// manager an SDK registers: what an unsampled delivery costs an app that samples a fraction of its traffic.
// That context manager is AsyncLocalStorage, whose hook runs for every promise of the process while it is on: it
// is registered for the SDK's contenders only (withSdk) and taken off after each, so the others run as an app
// without an SDK does.
const contextManager = new AsyncLocalStorageContextManager();
const withSdk = (run) => async (batch) => {
  context.setGlobalContextManager(contextManager.enable());
  try {
    await run(batch);
  } finally {
    context.disable();
  }
};
const dropping = new BasicTracerProvider({
  sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) }),
});
const droppingTracer = dropping.getTracer('messaging-webhooks');
const sampledOut = createReceiver({ secrets: SECRET, tracing: openTelemetry({ tracerProvider: dropping }) });
sampledOut.on('message.delivered', asyncHandler);

// The parts of receive() measured alone, to show where its time goes: what constructEvent also does (verify and
// parse), and what only a replay-safe receiver does (claim and complete, the executor).
const verifier = createVerifier({ secrets: SECRET });
const parseEvent = createEventParser(defaultEvents);
const store = new MemoryDedupeStore();
const queue = new PQueue({ concurrency: 32 });
const noop = () => undefined;

// What a user writes around constructEvent to be as safe: the hand-written route of bench/http.mjs, in process.
const handReceive = handRoute(SECRET, asyncHandler);
const handReceivePlain = handRoute(SECRET, plainHandler);

const OURS = 'receiver.receive(), async handler';
const OURS_PLAIN = 'receiver.receive(), handler returns nothing';
const HAND = 'the same guarantees by hand, async handler';
const HAND_PLAIN = 'the same guarantees by hand, handler returns nothing';
const STRIPE = 'stripe constructEvent';
const TRACED = 'receive() with openTelemetry() (no provider)';
const DROPPED = 'receive() with openTelemetry(), sampler drops';
const SDK_ALONE = 'reference: the SDK starting a span it drops';

/** receive() of a receiver over a batch, each delivery answered 200 as new. */
const receiving = (target) => async (batch) => {
  for (const { body, headers } of batch) {
    const outcome = await target.receive({ method: 'POST', headers, rawBody: body });
    if (outcome.status !== 200 || outcome.duplicate) throw new Error(`receive answered ${outcome.body}`);
  }
};
/** The hand route (constructEvent + zod + Map claim + p-queue + complete) over a batch. */
const byHand = (receive) => async (batch) => {
  for (const { body, headers } of batch) {
    const answer = await receive(body, headers['webhook-signature']);
    if (answer !== ANSWERS.received) throw new Error(`the hand route answered ${answer.status}`);
  }
};

const contenders = {
  [OURS]: receiving(receiver),
  [OURS_PLAIN]: receiving(plainReceiver),
  [HAND]: byHand(handReceive),
  [HAND_PLAIN]: byHand(handReceivePlain),
  [STRIPE]: async (batch) => {
    for (const { body, headers } of batch) {
      const event = Stripe.webhooks.constructEvent(body, headers['webhook-signature'], SECRET);
      if (event.type === 'message.delivered') handled++;
    }
  },
  [TRACED]: receiving(traced),
  [DROPPED]: withSdk(receiving(sampledOut)),
  // What the SDK alone costs to start a span the sampler drops (two new ids, the sampler), once per delivery:
  // a cost the contender above cannot avoid, since only the sampler can tell the span is dropped.
  [SDK_ALONE]: withSdk(async (batch) => {
    for (let i = 0; i < batch.length; i++) {
      droppingTracer.startSpan('POST', { kind: SpanKind.SERVER }, context.active()).end();
    }
  }),
  'part: verify + JSON + schema': async (batch) => {
    for (const { body, headers } of batch) {
      if (!verifier.verify({ headers, body }, Math.floor(Date.now() / 1000)).ok)
        throw new Error('unverified');
      if (!parseEvent(JSON.parse(utf8Text(body))).ok) throw new Error('unparsed');
    }
  },
  'part: memory claim + complete': async (batch) => {
    for (const { body } of batch) {
      const key = `live:${body.length}:${serial++}`;
      const claim = await store.claim(key, 60_000);
      await store.complete(key, claim.token, 7 * 24 * 3600_000);
    }
  },
  'part: p-queue add, awaited': async (batch) => {
    for (let i = 0; i < batch.length; i++) await queue.add(noop);
  },
  // AWS Lambda at the handler call: an API Gateway HTTP API (payload 2.0) event with its body in base64, as
  // API Gateway sends a JSON body; no HTTP. Against the handler a user writes with the hand route.
  'aws-lambda adapter (HTTP API event)': async (events) => {
    for (const event of events) {
      const result = await lambdaHandler(event);
      if (result.statusCode !== 200) throw new Error(`the Lambda handler answered ${result.body}`);
    }
  },
  'aws-lambda hand route (same guarantees)': async (events) => {
    for (const event of events) {
      const result = await handLambda(event);
      if (result.statusCode !== 200) throw new Error(`the hand Lambda answered ${result.body}`);
    }
  },
};

const lambdaReceiver = createReceiver({ secrets: SECRET });
lambdaReceiver.on('message.delivered', asyncHandler);
const lambdaHandler = createLambdaHandler(lambdaReceiver);
const handLambdaReceive = handRoute(SECRET, asyncHandler);
/** The hand route as a Lambda handler: the body decoded as API Gateway marks it, the answer in its result shape. */
async function handLambda(event) {
  const rawBody = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body;
  const answer = await handLambdaReceive(rawBody, event.headers['webhook-signature']);
  return {
    statusCode: answer.status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(answer.body),
  };
}
/** A delivery as API Gateway's HTTP API hands it to the function (made before the timed loop). */
const lambdaEvent = ({ body, headers }) => ({
  version: '2.0',
  rawPath: '/webhooks',
  rawQueryString: '',
  headers,
  requestContext: { http: { method: 'POST' } },
  body: body.toString('base64'),
  isBase64Encoded: true,
});

/** µs per call over one batch of new deliveries. */
async function sample(run) {
  const now = Math.floor(Date.now() / 1000);
  const deliveries = Array.from({ length: BATCH }, () => delivery(now));
  const batch = lambdaContenders.has(run) ? deliveries.map(lambdaEvent) : deliveries;
  const start = clock();
  await run(batch);
  return (clock() - start) / BATCH;
}

const names = Object.keys(contenders);
const lambdaContenders = new Set(
  names.filter((name) => name.startsWith('aws-lambda')).map((name) => contenders[name]),
);
const samples = await interleavedRounds(contenders, sample, { rounds: ROUNDS });

console.log(
  `node ${process.version}, ${process.env.CLOCK === 'wall' ? 'wall' : 'CPU'} time, ${ROUNDS} rounds × ${BATCH} new 1 KiB events, median µs per call\n`,
);
for (const name of names)
  console.log(`  ${name.padEnd(52)} ${median(samples[name]).toFixed(2).padStart(7)} µs`);
console.log(`  (${handled.toLocaleString('en-US')} events handled, every one new)`);
const [ours, stripe, tracedContender, droppedContender, sdkAlone] = [
  OURS,
  STRIPE,
  TRACED,
  DROPPED,
  SDK_ALONE,
];
const parts = names.filter((name) => name.startsWith('part: '));
const partsSum = parts.reduce((sum, name) => sum + median(samples[name]), 0);
console.log(
  `  sum of the parts: ${partsSum.toFixed(2)} µs; receive() beyond them (dispatch, answer, metrics, ids, promises): ${(median(samples[ours]) - partsSum).toFixed(2)} µs`,
);
const ratio = median(samples[ours].map((us, round) => samples[stripe][round] / us));
console.log(
  `\nspeed ratio receive() / constructEvent (median of per-round ratios): ${ratio.toFixed(2)}× (reference: constructEvent alone guarantees less)`,
);
for (const [mine, hand, kind] of [
  [OURS, HAND, 'async handler'],
  [OURS_PLAIN, HAND_PLAIN, 'handler returns nothing'],
]) {
  const same = median(samples[mine].map((us, round) => samples[hand][round] / us));
  console.log(
    `speed ratio receive() / the same guarantees by hand, ${kind}: ${same.toFixed(2)}× (target ≥ 1.0×: ${same >= 1 ? 'met' : 'MISSED'})`,
  );
}
const tracedCost = median(samples[tracedContender].map((us, round) => us / samples[ours][round]));
console.log(
  `time ratio receive() with openTelemetry() and no provider / receive(): ${tracedCost.toFixed(2)}×`,
);
const droppedCost = median(samples[droppedContender].map((us, round) => us / samples[ours][round]));
console.log(
  `time ratio receive() with openTelemetry() and a sampler that drops the delivery / receive(): ${droppedCost.toFixed(2)}× (target ≤ 1.10×: ${droppedCost <= 1.1 ? 'met' : 'MISSED'})`,
);
const floor = median(
  samples[sdkAlone].map((us, round) => (samples[ours][round] + us) / samples[ours][round]),
);
console.log(
  `  of which the SDK's own start of a dropped span, measured alone in a loop: ${floor.toFixed(2)}× (receive() + the reference / receive())`,
);
const lambdaRatio = median(
  samples['aws-lambda adapter (HTTP API event)'].map(
    (us, round) => samples['aws-lambda hand route (same guarantees)'][round] / us,
  ),
);
console.log(
  `speed ratio the Lambda adapter / the hand route as a Lambda handler: ${lambdaRatio.toFixed(2)}×`,
);
