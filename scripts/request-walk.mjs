// The walk of one request through the package: Express with the memory store and an async handler, one signed
// event answered 200.
// Prints how many library functions it entered per file (V8's precise coverage), then, with --trace, each of
// them in the order they ran (a breakpoint at each, whose condition records it and never pauses).
// Run it with `npm run walk` (which builds first) or `node scripts/request-walk.mjs [--trace]` on a built dist/.
import { existsSync, readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { SourceMap } from 'node:module';
import express from 'express';
import { webhookHandler } from '../dist/adapters/express.js';
import { createReceiver } from '../dist/src/index.js';
import { createEvent, signRequest } from '../dist/src/testing.js';

// dist/ is bundled (an entry per export, shared code in dist/chunks/): each function is named by the source file
// its source map points at, so the walk counts the package's own files (src/…, adapters/…).
const LIBRARY = /\/dist\/((?:src|adapters|chunks)\/.*)\.js$/;
const SOURCE = /(?:^|\/)((?:src|adapters)\/.*)\.ts$/;
function sourceMapOf(url) {
  const map = new URL(`${url}.map`);
  return existsSync(map) ? new SourceMap(JSON.parse(readFileSync(map, 'utf8'))) : undefined;
}
/** The source file (src/…/x, adapters/x) of a line and column of a built file. */
function sourceOf(map, built, lineNumber, columnNumber) {
  if (!map) return built;
  const entry = map.findEntry(lineNumber, columnNumber);
  return SOURCE.exec(entry?.originalSource ?? '')?.[1] ?? built;
}
const secret = `whsec_${Buffer.from('request-walk-secret-request-walk').toString('base64')}`;
const receiver = createReceiver({ secrets: secret });
// The handler as the README writes it: async.
receiver.on('message.delivered', async () => {});
const app = express();
app.post('/webhooks', webhookHandler(receiver));
const server = await new Promise((resolve) => {
  const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
});
const url = `http://127.0.0.1:${server.address().port}/webhooks`;

// Signed before measuring, so that only the receiving side is counted.
function signed(id) {
  const body = JSON.stringify(createEvent('message.delivered', { id }));
  const { headers } = signRequest({ payload: body, secret });
  return { body, headers: { 'content-type': 'application/json', ...headers } };
}
async function send({ body, headers }) {
  const response = await fetch(url, { method: 'POST', headers, body });
  if (response.status !== 200) throw new Error(`${response.status} ${await response.text()}`);
}
const [warm, counted, traced] = ['evt_warm', 'evt_counted', 'evt_traced'].map(signed);

await send(warm); // first calls compile lazily: the walk is measured on a warm receiver
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
await session.post('Profiler.takePreciseCoverage'); // resets the counters
await send(counted);
const { result } = await session.post('Profiler.takePreciseCoverage');

const entered = new Map();
const breakpoints = [];
for (const script of result) {
  const built = LIBRARY.exec(script.url)?.[1];
  if (!built) continue;
  const text = readFileSync(new URL(script.url), 'utf8');
  const map = sourceMapOf(script.url);
  for (const fn of script.functions) {
    const [range] = fn.ranges;
    // The module's own top level is not a function of the walk.
    if (range.count === 0 || (!fn.functionName && range.startOffset === 0)) continue;
    const before = text.slice(0, range.startOffset);
    const lineNumber = before.split('\n').length - 1;
    const columnNumber = range.startOffset - (before.lastIndexOf('\n') + 1);
    const file = sourceOf(map, built, lineNumber, columnNumber);
    entered.set(`${file}.ts`, (entered.get(`${file}.ts`) ?? 0) + range.count);
    const label = `${file}.ts ${fn.functionName || '(anonymous)'}`;
    breakpoints.push({ url: script.url, lineNumber, columnNumber, label });
  }
}

globalThis.requestWalk = [];
await session.post('Debugger.enable');
for (const { label, ...at } of breakpoints) {
  const condition = `globalThis.requestWalk.push(${JSON.stringify(label)}), false`;
  await session.post('Debugger.setBreakpointByUrl', { ...at, condition });
}
await send(traced);
const trace = globalThis.requestWalk;
const fileOf = (entry) => entry.split(' ')[0];
const hops = trace.filter((entry, i) => i > 0 && fileOf(entry) !== fileOf(trace[i - 1])).length;
server.close();
session.disconnect();

const total = [...entered.values()].reduce((sum, count) => sum + count, 0);
console.log(`${total} function entries in ${entered.size} files; ${hops} hops from one file to another`);
for (const [file, count] of [...entered].sort((a, b) => b[1] - a[1]))
  console.log(`${String(count).padStart(4)}  ${file}`);
if (process.argv.includes('--trace')) for (const entry of trace) console.log(`      ${entry}`);
