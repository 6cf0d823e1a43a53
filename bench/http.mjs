// HTTP throughput on loopback: `npm run bench:http` (builds, then runs `node bench/http.mjs`).
// Each contender is a server process of its own (this file with `serve <name>`); this process drives them with
// autocannon, one at a time, in rounds. Every request is a distinct 1 KiB event, signed shortly before the run, so
// the adapters take their whole processed path (verify, parse, claim, handler, complete), never the duplicate
// shortcut. Every receiver and hand route registers the README's `async` handler; the guarantee targets (the
// Fastify and Express adapters and receiver.receive against their hand routes) also run with a handler that
// returns nothing, each as a contender of its own in the same rounds. Env: ROUNDS (5), SLICE (s per round, 1.5), WARMUP (s, 1), REWARM (s before each slice on its connections, 2),
// NEW_CONNECTIONS (1: each slice on connections of its own), CONNECTIONS (10), ONLY (names, comma list),
// PROFILE (a folder: each server writes a V8 CPU profile there, read by bench/profile.mjs), PIN (0: no CPU pinning).
import { execFileSync, fork, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { handRoute } from './hand-route.mjs';
import { frameworkContenders } from './http-frameworks.mjs';

const SECRET = 'whsec_bench_http_3c9d1e7f5a2b4c6d8e0f1a2b3c4d5e6f';
const BODY_BYTES = 1024;
const PATH = '/webhooks';
// The receiver's default bodyTimeoutMs: the hand routes get the same deadline from their server.
const BODY_TIMEOUT_MS = 10_000;

/** The contenders: how each server mounts the route. Loaded in the server process only. */
const contenders = {
  'fastify adapter': async () => {
    const { default: Fastify } = await import('fastify');
    const { default: webhooks } = await import('messaging-webhooks/fastify');
    const { receiver, stats } = await benchReceiver();
    const app = Fastify();
    await app.register(webhooks, { receiver, path: PATH });
    return { listen: () => app.listen({ port: 0, host: '127.0.0.1' }), stats };
  },
  // The core mounted by hand with the same buffer parser as the stripe route: the gap to the adapter is the
  // adapter's own cost.
  'fastify + receiver.receive by hand': async () => {
    const { default: Fastify } = await import('fastify');
    const { receiver, stats } = await benchReceiver();
    const app = Fastify();
    await app.register(async (scope) => {
      scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
        done(null, body),
      );
      scope.post(PATH, async (request, reply) => {
        const outcome = await receiver.receive({
          method: 'POST',
          headers: request.headers,
          rawBody: request.body,
        });
        return reply.code(outcome.status).headers(outcome.headers).send(outcome.body);
      });
    });
    return { listen: () => app.listen({ port: 0, host: '127.0.0.1' }), stats };
  },
  'fastify + stripe constructEvent': async () => {
    const { default: Fastify } = await import('fastify');
    const stats = { processed: 0 };
    const stripe = await stripeClient();
    const app = Fastify();
    await app.register(async (scope) => {
      scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
        done(null, body),
      );
      scope.post(PATH, async (request, reply) => {
        try {
          const event = stripe.webhooks.constructEvent(
            request.body,
            request.headers['webhook-signature'],
            SECRET,
          );
          if (event.type === 'message.delivered') stats.processed++;
        } catch {
          return reply.code(400).send({ error: 'invalid signature' });
        }
        return { received: true };
      });
    });
    return { listen: () => app.listen({ port: 0, host: '127.0.0.1' }), stats };
  },
  // What a user writes by hand to be as safe as the adapter (bench/hand-route.mjs): Fastify's requestTimeout
  // as the body deadline, the raw body, constructEvent, zod, a Map claim, p-queue around the handler.
  'fastify hand route (same guarantees)': async () => {
    const { default: Fastify } = await import('fastify');
    const stats = { processed: 0 };
    const receive = handRoute(SECRET, countDelivered(stats));
    const app = Fastify({ requestTimeout: BODY_TIMEOUT_MS });
    await app.register(async (scope) => {
      scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
        done(null, body),
      );
      scope.post(PATH, async (request, reply) => {
        const answer = await receive(request.body, request.headers['webhook-signature']);
        return reply.code(answer.status).send(answer.body);
      });
    });
    return { listen: () => app.listen({ port: 0, host: '127.0.0.1' }), stats };
  },
  'fastify bare (JSON, no verification)': async () => {
    const { default: Fastify } = await import('fastify');
    const stats = { processed: 0 };
    const app = Fastify();
    app.post(PATH, async (request) => {
      if (request.body.type === 'message.delivered') stats.processed++;
      return { received: true };
    });
    return { listen: () => app.listen({ port: 0, host: '127.0.0.1' }), stats };
  },
  'express adapter': async () => {
    const { default: express } = await import('express');
    const { webhookHandler } = await import('messaging-webhooks/express');
    const { receiver, stats } = await benchReceiver();
    const app = express();
    app.post(PATH, webhookHandler(receiver));
    return { listen: () => listenExpress(app), stats };
  },
  'express + receiver.receive by hand': async () => {
    const { default: express } = await import('express');
    const { receiver, stats } = await benchReceiver();
    const app = express();
    app.post(PATH, express.raw({ type: 'application/json' }), async (req, res) => {
      const outcome = await receiver.receive({ method: 'POST', headers: req.headers, rawBody: req.body });
      res.status(outcome.status).set(outcome.headers).send(outcome.body);
    });
    return { listen: () => listenExpress(app), stats };
  },
  'express hand route (same guarantees)': async () => {
    const { default: express } = await import('express');
    const stats = { processed: 0 };
    const receive = handRoute(SECRET, countDelivered(stats));
    const app = express();
    app.post(PATH, express.raw({ type: 'application/json' }), async (req, res) => {
      const answer = await receive(req.body, req.headers['webhook-signature']);
      res.status(answer.status).json(answer.body);
    });
    return { listen: () => listenExpress(app, BODY_TIMEOUT_MS), stats };
  },
  'express + stripe constructEvent': async () => {
    const { default: express } = await import('express');
    const stats = { processed: 0 };
    const stripe = await stripeClient();
    const app = express();
    app.post(PATH, express.raw({ type: 'application/json' }), (req, res) => {
      try {
        const event = stripe.webhooks.constructEvent(req.body, req.headers['webhook-signature'], SECRET);
        if (event.type === 'message.delivered') stats.processed++;
      } catch {
        res.status(400).json({ error: 'invalid signature' });
        return;
      }
      res.json({ received: true });
    });
    return { listen: () => listenExpress(app), stats };
  },
  'express bare (JSON, no verification)': async () => {
    const { default: express } = await import('express');
    const stats = { processed: 0 };
    const app = express();
    app.post(PATH, express.json(), (req, res) => {
      if (req.body.type === 'message.delivered') stats.processed++;
      res.json({ received: true });
    });
    return { listen: () => listenExpress(app), stats };
  },
  ...frameworkContenders({
    secret: SECRET,
    path: PATH,
    bodyTimeoutMs: BODY_TIMEOUT_MS,
    benchReceiver,
    countDelivered,
  }),
};

/**
 * The handler every contender registers, of the kind its name says: the README's `async` handler (the main
 * case: what the README and every guide register) or one that returns nothing. Both count what they are given.
 */
const HANDLER_KINDS = {
  async: 'async handler',
  plain: 'handler returns nothing',
};
let handlerKind = 'async';
function userHandler(stats) {
  return handlerKind === 'async'
    ? async (event) => {
        if (event.data.to.length > 0) stats.processed++;
      }
    : (event) => {
        if (event.data.to.length > 0) stats.processed++;
      };
}

/** The adapters' receiver: memory store (the default), one typed handler of the contender's kind. */
async function benchReceiver() {
  const { createReceiver } = await import('messaging-webhooks');
  const stats = { processed: 0 };
  const receiver = createReceiver({ secrets: SECRET });
  receiver.on('message.delivered', userHandler(stats));
  return { receiver, stats };
}

async function stripeClient() {
  const { default: Stripe } = await import('stripe');
  return new Stripe('sk_test_bench_not_a_real_key'); // constructEvent is local: no request is made
}

function listenExpress(app, requestTimeout) {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`));
    if (requestTimeout !== undefined) server.requestTimeout = requestTimeout;
  });
}

/** The hand routes' handler: the adapters' handler, of the same kind. */
function countDelivered(stats) {
  return userHandler(stats);
}

// ---- server process -------------------------------------------------------------------------------------------

/**
 * The contenders of the guarantee targets run once per kind of handler, as `<name> [async handler]` and
 * `<name> [handler returns nothing]`; every other contender registers the async handler.
 */
const BY_KIND = [
  'fastify adapter',
  'fastify hand route (same guarantees)',
  'fastify + receiver.receive by hand',
  'express adapter',
  'express hand route (same guarantees)',
];
const KINDED = /^(.*) \[(async handler|handler returns nothing)\]$/;
const contenderNames = Object.keys(contenders).flatMap((name) =>
  BY_KIND.includes(name) ? Object.values(HANDLER_KINDS).map((kind) => `${name} [${kind}]`) : [name],
);

async function serve(fullName) {
  const [, base = fullName, kind = HANDLER_KINDS.async] = KINDED.exec(fullName) ?? [];
  handlerKind = kind === HANDLER_KINDS.async ? 'async' : 'plain';
  const name = base;
  const { listen, stats } = await contenders[name]();
  const url = await listen();
  process.send({ url });
  process.on('message', (message) => {
    if (message === 'stats') process.send({ processed: stats.processed, cpu: process.cpuUsage() });
    if (message === 'exit') {
      // The profile's reader (bench/profile.mjs) divides its time by the requests this server answered.
      if (process.env.PROFILE) {
        const file = join(process.env.PROFILE, `${process.pid}.requests.json`);
        writeFileSync(file, JSON.stringify({ name: fullName, requests: stats.processed }));
      }
      process.exit(0); // a clean exit writes the --cpu-prof profile
    }
  });
}

// ---- driver ---------------------------------------------------------------------------------------------------

/**
 * The n-th distinct message.delivered event, exactly BODY_BYTES bytes, signed when it is sent
 * (t=…,v1=HMAC-SHA256 of "t.body"): however fast a contender runs, it never sees an event twice.
 */
function signedEvent(n) {
  const id = `evt_${String(n).padStart(26, '0')}`;
  const event = {
    id,
    type: 'message.delivered',
    created_at: '2026-11-21T10:00:00+00:00',
    data: { message_id: `msg_${id.slice(4)}`, to: '+15551234567', operator: 'op_bench', note: '' },
  };
  event.data.note = 'x'.repeat(BODY_BYTES - JSON.stringify(event).length); // all ASCII: length = bytes
  const body = JSON.stringify(event);
  const timestamp = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', SECRET).update(`${timestamp}.`).update(body).digest('hex');
  return {
    body,
    headers: { 'content-type': 'application/json', 'webhook-signature': `t=${timestamp},v1=${v1}` },
  };
}

/** A contender's server process; `cursor` counts its events, so it never sees one twice. */
async function startServer(name) {
  const execArgv = process.env.PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE}`] : [];
  const script = [...execArgv, fileURLToPath(import.meta.url), 'serve', name];
  const child = PINNED
    ? spawn('taskset', ['-c', String(SERVER_CPU), process.execPath, ...script], {
        stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
      })
    : fork(script[execArgv.length], script.slice(execArgv.length + 1), { stdio: 'inherit', execArgv });
  const { url } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the ${name} server exited with ${code}`)));
  });
  const stats = () =>
    new Promise((resolve) => {
      child.once('message', resolve);
      child.send('stats');
    });
  return { name, url, child, stats, cursor: 0, slices: [] };
}

async function load(autocannon, server, seconds, connections) {
  const first = server.cursor;
  const result = await autocannon({
    url: `${server.url}${PATH}`,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          const delivery = signedEvent(server.cursor++);
          return { ...request, body: delivery.body, headers: delivery.headers };
        },
      },
    ],
  });
  return { result, sent: server.cursor - first };
}

/**
 * One measured slice: a single load on the same connections, first `rewarm` s unmeasured, then `slice` s measured
 * from the server's own counters, then a short tail. A server left idle while the others ran has had its code
 * aged out by V8's idle GCs, and closing a run's connections deoptimizes the stream code that served them: both
 * are recompiled in the unmeasured part, so the slice measures the route on warm connections. V8's memory reducer
 * also shrinks an idle server's heap, and a server holding much (the adapters' memory store: 100,000 keys) pays
 * more GC until it has grown back: the re-warm's length (REWARM) was chosen so that it has, as with the reducer
 * turned off (--no-memory-reducer); bench/NOTES.md has the runs that chose it. With NEW_CONNECTIONS=1 the warm-up is a load of its own and the slice opens new connections, recompiling included.
 */
async function measuredSlice(autocannon, server, { rewarm, slice, connections }) {
  const at = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const first = { sent: server.cursor, processed: (await server.stats()).processed };
  const fresh = process.env.NEW_CONNECTIONS === '1';
  if (fresh) await load(autocannon, server, rewarm, connections);
  const lead = fresh ? 0 : rewarm;
  const loading = load(autocannon, server, lead + slice + TAIL_SECONDS, connections);
  await at(lead);
  const before = await server.stats();
  const started = performance.now();
  await at(slice);
  const after = await server.stats();
  const seconds = (performance.now() - started) / 1000;
  const { result } = await loading;
  const last = await server.stats();
  const measured = after.processed - before.processed;
  const cpuMicros = after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system;
  return {
    result,
    rps: measured / seconds,
    cpuPerRequest: cpuMicros / measured,
    // Over the whole load: every event sent should have been handled.
    sent: server.cursor - first.sent,
    handled: last.processed - first.processed,
  };
}

/** Load kept up after a slice's second counter read, so that the read happens before connections close. */
const TAIL_SECONDS = 0.3;

/**
 * With two CPUs or more (and taskset), the servers run on the last CPU and this driver on the first: neither
 * waits for the other's core, which otherwise moved a contender's CPU per request from run to run.
 * PIN=0 turns it off.
 */
const SERVER_CPU = availableParallelism() - 1;
let PINNED = false; // decided by the driver only: a server must not pin itself to the driver's CPU

function pinDriver() {
  try {
    execFileSync('taskset', ['-cp', '0', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false; // no taskset: unpinned, as before
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function drive() {
  const { default: autocannon } = await import('autocannon');
  const rounds = Number(process.env.ROUNDS ?? 5);
  const slice = Number(process.env.SLICE ?? 1.5);
  const warmup = Number(process.env.WARMUP ?? 1);
  const rewarm = Number(process.env.REWARM ?? 2);
  const connections = Number(process.env.CONNECTIONS ?? 10);
  PINNED = process.env.PIN !== '0' && SERVER_CPU > 0 && pinDriver();
  const only = process.env.ONLY?.split(',').map((name) => name.trim());
  const names = contenderNames.filter((name) => !only || only.some((part) => name.includes(part)));
  console.log(
    `bench/http: ${BODY_BYTES} B signed events, a new event per request, ${connections} connections; ` +
      `each contender: ${warmup} s warmup, then ${rounds} rounds of ${slice} s taken in turns (each after ${rewarm} s unmeasured, ${process.env.NEW_CONNECTIONS === '1' ? 'on connections of its own' : 'on the same connections'}; ` +
      `req/s and CPU from the server's counters over the slice, latency over the whole load) ` +
      `(background load hits all alike), median round reported; ratios are medians of per-round ratios. ` +
      `${PINNED ? `Servers on CPU ${SERVER_CPU}, this driver on CPU 0. ` : ''}Node ${process.version}\n`,
  );
  if (Buffer.byteLength(signedEvent(0).body) !== BODY_BYTES) throw new Error('the event is not 1 KiB');
  const servers = [];
  try {
    for (const name of names) servers.push(await startServer(name));
    for (const server of servers) await load(autocannon, server, warmup, connections);
    for (let round = 0; round < rounds; round++) {
      // Rotating the order moves each contender through the positions in the round.
      for (let i = 0; i < servers.length; i++) {
        const server = servers[(i + round) % servers.length];
        server.slices.push(await measuredSlice(autocannon, server, { rewarm, slice, connections }));
      }
      console.log(`  round ${round + 1}/${rounds} done`);
    }
  } finally {
    for (const server of servers) server.child.send('exit');
  }
  const rows = servers.map(({ name, slices }) => {
    const sum = (pick) => slices.reduce((total, s) => total + pick(s), 0);
    // Every request carries a new event, so each one sent should have been handled. (A request still in flight when a slice stopped may count as sent only.)
    if (sum((s) => s.handled) < 0.99 * sum((s) => s.sent))
      console.warn(`  ${name}: requests went unprocessed`);
    return {
      name,
      slices,
      rps: median(slices.map((s) => s.rps)),
      p50: median(slices.map((s) => s.result.latency.p50)),
      p99: median(slices.map((s) => s.result.latency.p99)),
      cpu: median(slices.map((s) => s.cpuPerRequest)),
      failed: sum((s) => s.result.non2xx + s.result.errors + s.result.timeouts),
      sent: sum((s) => s.sent),
      processed: sum((s) => s.handled),
    };
  });
  printTable(rows);
}

function printTable(rows) {
  const find = (name) => rows.find((row) => row.name === name);
  // Paired: the two contenders' slices of one round ran minutes apart at most, under the same load.
  const ratios = (a, b) => {
    if (!find(a) || !find(b)) return 'n/a';
    const [first, second] = [find(a).slices, find(b).slices];
    const rps = median(first.map((slice, i) => slice.rps / second[i].rps));
    const cpu = median(first.map((slice, i) => second[i].cpuPerRequest / slice.cpuPerRequest));
    return `${rps.toFixed(2)}× by req/s, ${cpu.toFixed(2)}× by server CPU per request`;
  };
  console.log('\n| contender | req/s | p50 ms | p99 ms | server CPU µs/req | failed | handled / sent |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const row of rows) {
    console.log(
      `| ${row.name} | ${Math.round(row.rps)} | ${row.p50} | ${row.p99} | ${Math.round(row.cpu)} | ${row.failed} | ${row.processed} / ${row.sent} |`,
    );
  }
  const [asyncKind, plainKind] = Object.values(HANDLER_KINDS);
  const kinded = (name, kind = asyncKind) => `${name} [${kind}]`;
  for (const framework of ['koa', 'nestjs', 'h3', 'hono', 'gcf']) {
    const adapter = rows.find((row) => row.name.startsWith(`${framework} adapter`));
    const hand = `${framework} hand route (same guarantees)`;
    if (adapter && find(hand))
      console.log(
        `${adapter.name} vs the hand route with the same guarantees: ${ratios(adapter.name, hand)}`,
      );
  }
  const honoCore = 'hono + receiver.receive by hand';
  if (find('hono adapter (fetch handler)') && find(honoCore))
    console.log(
      `hono adapter (fetch handler) vs receiver.receive on Hono's body reader: ${ratios('hono adapter (fetch handler)', honoCore)}`,
    );
  const lines = [''];
  for (const kind of [asyncKind, plainKind]) {
    const versus = (a, b) => ratios(kinded(a, kind), kinded(b, kind));
    lines.push(
      `fastify adapter vs the hand route, ${kind}: ${versus('fastify adapter', 'fastify hand route (same guarantees)')} (target ≥ 1.0×)`,
      `express adapter vs the hand route, ${kind}: ${versus('express adapter', 'express hand route (same guarantees)')} (target ≥ 1.0×)`,
      `fastify adapter vs receiver.receive mounted by hand, ${kind}: ${versus('fastify adapter', 'fastify + receiver.receive by hand')}`,
    );
  }
  lines.push(
    `fastify adapter vs fastify + constructEvent alone (reference, not as safe): ${ratios(kinded('fastify adapter'), 'fastify + stripe constructEvent')}`,
    `express adapter vs express + constructEvent: ${ratios(kinded('express adapter'), 'express + stripe constructEvent')} (target ≥ 1.10×)`,
    `fastify adapter vs fastify bare: ${ratios(kinded('fastify adapter'), 'fastify bare (JSON, no verification)')}`,
    `express adapter vs express bare: ${ratios(kinded('express adapter'), 'express bare (JSON, no verification)')}`,
  );
  console.log(lines.join('\n'));
}

if (process.argv[2] === 'serve') await serve(process.argv[3]);
else await drive();
