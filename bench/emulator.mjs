// Webhook throughput of the emulator: `npm run bench:emulator` (builds, then runs `node bench/emulator.mjs`).
// A receiver (node:http adapter, memory store, a handler that counts) runs in its own process; this process runs
// the emulator with no lifecycle delays and sends one campaign to a group of CONTACTS contacts through the API:
// as many messages, each a signed message.delivered webhook. Measured from the campaign request until every
// webhook is acknowledged: deliveries/s, this process's CPU (% of one core) and memory, the receiver's CPU.
// Env: CONTACTS (20000), CONCURRENCY (webhook requests in flight, 64). Run with --expose-gc (the npm script does)
// to also print what the in-memory record retains.
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

const SECRET = 'whsec_bench_emulator_3c9a7e1f5b2d8a4c';
const CONTACTS = Number(process.env.CONTACTS ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);

if (process.argv[2] === 'serve') await serve();
else await drive();

async function serve() {
  const { createReceiver } = await import('messaging-webhooks');
  const { createNodeHandler } = await import('messaging-webhooks/node');
  const receiver = createReceiver({ secrets: SECRET });
  let handled = 0;
  receiver.on('message.delivered', () => {
    handled++;
  });
  const server = http.createServer({ keepAliveTimeout: 30_000 }, createNodeHandler(receiver));
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  let cpu = process.cpuUsage();
  let since = performance.now();
  process.on('message', (message) => {
    if (message === 'mark') {
      cpu = process.cpuUsage();
      since = performance.now();
    }
    if (message === 'stats') {
      const used = process.cpuUsage(cpu);
      const percent = ((used.user + used.system) / 1000 / (performance.now() - since)) * 100;
      process.send({ handled, cpu: percent, rss: process.memoryUsage().rss });
    }
    if (message === 'stop') server.close(() => process.exit(0));
  });
}

async function drive() {
  const { startEmulator } = await import('messaging-webhooks/emulator');
  const child = fork(fileURLToPath(import.meta.url), ['serve']);
  const ask = (message) => new Promise((resolve) => child.once('message', resolve) && child.send(message));
  const { port } = await new Promise((resolve) => child.once('message', resolve));
  const contacts = Array.from({ length: CONTACTS }, (_, i) => ({
    phone: `+1555${String(i).padStart(7, '0')}`,
  }));
  const emulator = await startEmulator({
    test: { endpoint: `http://127.0.0.1:${port}/webhooks`, secret: SECRET },
    groups: [{ id: 'grp_bench', contacts }],
    schedule: { submitMs: 0, resultMs: 0, jitterMs: 0 },
    concurrency: CONCURRENCY,
    seed: 1,
  });
  const acknowledged = () => {
    let count = 0;
    for (const delivery of emulator.state.deliveries.values()) if (delivery.state === 'acknowledged') count++;
    return count;
  };
  let peakRss = 0;
  let peakHeap = 0;
  const sample = () => {
    const { rss, heapUsed } = process.memoryUsage();
    peakRss = Math.max(peakRss, rss);
    peakHeap = Math.max(peakHeap, heapUsed);
  };
  const before = process.memoryUsage();
  child.send('mark');
  const cpu = process.cpuUsage();
  const started = performance.now();
  const answer = await fetch(`${emulator.url}/v1/campaigns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.modes.test.keys[0]}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'Bench',
      sender: 'Acme',
      template_id: 'tmpl_welcome',
      group_id: 'grp_bench',
    }),
  });
  if (answer.status !== 202)
    throw new Error(`The campaign was answered ${answer.status}: ${await answer.text()}`);
  while (acknowledged() < CONTACTS) {
    sample();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const elapsed = performance.now() - started;
  sample();
  const used = process.cpuUsage(cpu);
  const receiver = await ask('stats');
  const attempts = [...emulator.state.deliveries.values()].reduce((sum, d) => sum + d.attempts.length, 0);
  const mb = (bytes) => (bytes / 1048576).toFixed(1);
  console.log(
    `emulator → receiver (node:http, memory store), ${CONTACTS} messages in one campaign, ${CONCURRENCY} in flight`,
  );
  console.log(
    `deliveries: ${CONTACTS} acknowledged (${attempts} attempts) in ${(elapsed / 1000).toFixed(2)} s = ${Math.round((CONTACTS / elapsed) * 1000)} deliveries/s`,
  );
  console.log(
    `receiver handled ${receiver.handled} events; receiver CPU ${receiver.cpu.toFixed(0)}% of one core, rss ${mb(receiver.rss)} MB`,
  );
  console.log(
    `emulator CPU ${(((used.user + used.system) / 1000 / elapsed) * 100).toFixed(0)}% of one core (user ${Math.round(used.user / 1000)} ms, system ${Math.round(used.system / 1000)} ms)`,
  );
  console.log(
    `emulator memory: rss ${mb(before.rss)} → peak ${mb(peakRss)} MB, heapUsed ${mb(before.heapUsed)} → peak ${mb(peakHeap)} MB (all ${CONTACTS} messages, events and attempts kept in memory)`,
  );
  // What the record itself holds once the garbage of the run is collected (run with --expose-gc).
  if (globalThis.gc) {
    globalThis.gc();
    const kept = process.memoryUsage().heapUsed - before.heapUsed;
    console.log(
      `retained by the record after GC: ${mb(kept)} MB (${Math.round(kept / CONTACTS)} bytes per message)`,
    );
  }
  await emulator.close();
  child.send('stop');
  if (receiver.handled !== CONTACTS) {
    console.log(`FAIL: the receiver handled ${receiver.handled} of ${CONTACTS}`);
    process.exitCode = 1;
  }
}
