// Reconciliation against the service's rate limit: `npm run bench:reconcile` (builds, then runs
// `node bench/reconcile.mjs`). The emulator sends one campaign to MESSAGES contacts with every receipt lost
// (webhookLoss 1), so each message stays open in a tracker (memory store) that expected it; one reconcile pass
// then asks the status path about all of them with one key, its quota RATE requests a second. Prints
// messages/s against the rate the quota allows, the 429s the client was answered, the seconds it waited them
// out, and the waits it broke (requests the emulator saw before a 429's retry_after_seconds passed).
// Env: MESSAGES (10000), RATE (requests per second per key: 100, the emulator's test-mode default).
import http from 'node:http';
import os from 'node:os';

const MESSAGES = Number(process.env.MESSAGES ?? 10_000);
const RATE = Number(process.env.RATE ?? 100);
const SECRET = 'whsec_bench_reconcile_7a1c4e9b2d5f8063';
const SEND_KEY = 'sk_test_bench_reconcile_send';
const STATUS_KEY = 'sk_test_bench_reconcile_status';

const { startEmulator } = await import('messaging-webhooks/emulator');
const { createMessageTracker, createServiceClient } = await import('messaging-webhooks/tracker');

// The receipts are lost on purpose; the submitted events still come, and are answered without a receiver.
const endpoint = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(204).end());
});
await new Promise((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
const contacts = Array.from({ length: MESSAGES }, (_, i) => ({
  phone: `+1555${String(i).padStart(7, '0')}`,
}));
const emulator = await startEmulator({
  test: {
    endpoint: `http://127.0.0.1:${endpoint.address().port}/webhooks`,
    secret: SECRET,
    keys: [SEND_KEY, STATUS_KEY],
    rateLimit: { requests: RATE, windowSeconds: 1 },
  },
  groups: [{ id: 'grp_bench', contacts }],
  schedule: { submitMs: 0, resultMs: 0, jitterMs: 0, failureRate: 0.1 },
  chaos: { webhookLoss: 1 },
  seed: 1,
});

const answer = await fetch(`${emulator.url}/v1/campaigns`, {
  method: 'POST',
  headers: { authorization: `Bearer ${SEND_KEY}`, 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'Bench', sender: 'Acme', template_id: 'tmpl_welcome', group_id: 'grp_bench' }),
});
if (answer.status !== 202)
  throw new Error(`The campaign was answered ${answer.status}: ${await answer.text()}`);
const messages = () => [...emulator.state.messages.values()];
const final = (status) => status === 'delivered' || status === 'failed';
while (messages().length < MESSAGES || !messages().every((message) => final(message.status))) {
  await new Promise((resolve) => setTimeout(resolve, 100));
}
await emulator.idle();

const tracker = createMessageTracker();
for (const message of messages())
  await tracker.expect(message.id, { sentAt: Date.parse(message.created_at) });
const client = createServiceClient({ baseUrl: emulator.url, apiKey: STATUS_KEY });
const loadBefore = os.loadavg()[0];
const started = performance.now();
const summary = await tracker.reconcile({ client, olderThanMs: 0, limit: MESSAGES });
const seconds = (performance.now() - started) / 1000;

let mismatched = 0;
for (const message of messages()) {
  if ((await tracker.status(message.id))?.status !== message.status) mismatched++;
}
const { requests, rateLimited, waitedMs } = client.stats;
console.log(
  `reconcile: ${MESSAGES} open messages, one pass, one key at ${RATE} requests/s (emulator, webhookLoss 1)`,
);
console.log(
  `${summary.checked} checked, ${summary.moved} moved, ${summary.stillOpen} still open, ${summary.failed} failed in ${seconds.toFixed(1)} s = ${(summary.checked / seconds).toFixed(1)} messages/s (${((summary.checked / seconds / RATE) * 100).toFixed(0)}% of the ${RATE}/s allowed)`,
);
console.log(
  `${requests} requests, ${rateLimited} answered 429, ${(waitedMs / 1000).toFixed(1)} s waited on them, ${emulator.state.brokenWaits} broken waits`,
);
console.log(
  `statuses different from the emulator's: ${mismatched}; load average ${loadBefore.toFixed(1)} → ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores, ${new Date().toISOString()}`,
);
await emulator.close();
await new Promise((resolve) => endpoint.close(resolve));
if (mismatched > 0 || summary.failed > 0 || emulator.state.brokenWaits > 0) process.exitCode = 1;
