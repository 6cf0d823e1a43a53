// Where each microsecond of a request goes: reads the V8 CPU profiles `PROFILE=dir node bench/http.mjs` (or bench/durable.mjs) leaves
// (one per server, with the count of requests it answered beside it) and prints, per contender, its busy time
// grouped by who spent it, in µs per request. `node bench/profile.mjs dir [TOP]`; TOP also lists the top
// functions of our code.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node bench/profile.mjs <PROFILE folder> [top functions]');
const top = Number(process.argv[3] ?? 0);

// First match wins: a sample is booked to the first group whose test its frame passes.
const GROUPS = [
  [
    'socket write (kernel + libuv writev)',
    (_url, fn) => fn === 'writev' || fn === 'writeUtf8String' || fn === 'writeBuffer',
  ],
  ['garbage collection', (_url, fn) => fn === '(garbage collector)'],
  ['V8 outside JS frames', (_url, fn) => fn === '(program)'],
  ['HMAC-SHA256 (node:crypto)', (url) => url.startsWith('node:internal/crypto')],
  [
    'messaging-webhooks (pipeline, stages, verifier, adapter, store)',
    (url) => /\/dist\/(src|adapters|chunks)\//.test(url),
  ],
  ['stripe-node constructEvent', (url) => url.includes('node_modules/stripe/')],
  ['the hand route (schema call, Map claim)', (url) => url.includes('bench/hand-route.mjs')],
  [
    'BullMQ (Queue.add, Job, scripts)',
    (url) => /node_modules\/(bullmq|msgpackr|cron-parser|semver)\//.test(url),
  ],
  ['node-redis client', (url) => /node_modules\/(@redis|redis|cluster-key-slot|generic-pool)\//.test(url)],
  [
    'pg-boss and pg',
    (url) => /node_modules\/(pg-boss|pg|pg-protocol|pg-pool|pg-types|postgres-[a-z]+)\//.test(url),
  ],
  ['zod schema', (url) => url.includes('node_modules/zod/')],
  ['p-queue', (url) => /node_modules\/(p-queue|eventemitter3|p-timeout)\//.test(url)],
  [
    'Fastify (routing, hooks, reply)',
    (url) =>
      /node_modules\/(fastify|find-my-way|@fastify|fast-json-stringify|light-my-request|avvio|fast-querystring|secure-json-parse)\//.test(
        url,
      ),
  ],
  [
    'Express (router, body parser, response)',
    (url) =>
      /node_modules\/(express|router|body-parser|raw-body|finalhandler|send|serve-static|content-type|type-is|mime-types|on-finished|iconv-lite|qs|depd|statuses|http-errors|media-typer|accepts|negotiator|etag|fresh|parseurl|cookie|encodeurl|escape-html|merge-descriptors|vary|proxy-addr|range-parser)\//.test(
        url,
      ),
  ],
  [
    'node:http (parser, server, response)',
    (url, fn) => url.startsWith('node:_http') || fn === 'execute' || fn === 'llhttp',
  ],
  ['node streams (the body read)', (url) => url.startsWith('node:internal/streams')],
  [
    'promise and tick scheduling',
    (url, fn) => fn === 'runMicrotasks' || url === 'node:internal/process/task_queues',
  ],
  ['timers', (url) => url === 'node:internal/timers' || url === 'node:timers'],
  [
    'JSON and UTF-8 (decode, encode)',
    (url, fn) => url === 'node:internal/encoding' || /^(decodeUTF8|utf8Write|JSON)/.test(fn),
  ],
  ['Node runtime otherwise (events, buffers, the rest)', (url) => url.startsWith('node:')],
  ['other (bench driver, native)', () => true],
];

// dist/ is bundled: a frame of ours is named by the TypeScript file and line its source map points at.
const maps = new Map();
function sourceOf(path, lineNumber, columnNumber) {
  if (!maps.has(path))
    maps.set(
      path,
      existsSync(`${path}.map`) ? new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8'))) : undefined,
    );
  const entry = maps.get(path)?.findEntry(lineNumber, columnNumber);
  const source = /(?:^|\/)((?:src|adapters)\/.*\.ts)$/.exec(entry?.originalSource ?? '')?.[1];
  return source
    ? `${source}:${entry.originalLine + 1}`
    : `${path.replace(/^.*\/dist\//, '')}:${lineNumber + 1}`;
}

for (const file of readdirSync(dir).filter((name) => name.endsWith('.requests.json'))) {
  const { name, requests } = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const pid = file.split('.')[0];
  const profileFile = readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && f.includes(`.${pid}.`));
  if (!profileFile) continue;
  const profile = JSON.parse(readFileSync(join(dir, profileFile), 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byGroup = new Map();
  const ours = new Map();
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const { functionName, url, lineNumber, columnNumber } = nodes.get(profile.samples[i]);
    if (functionName === '(idle)') continue;
    const micros = profile.timeDeltas[i] ?? 0;
    busy += micros;
    const path = url.replace(/^file:\/\//, '');
    const [group] = GROUPS.find(([, test]) => test(path, functionName));
    byGroup.set(group, (byGroup.get(group) ?? 0) + micros);
    if (group.startsWith('messaging-webhooks')) {
      const where = `${functionName || '(anonymous)'} ${sourceOf(path, lineNumber, columnNumber)}`;
      ours.set(where, (ours.get(where) ?? 0) + micros);
    }
  }
  console.log(
    `\n${name}: ${requests.toLocaleString('en-US')} requests, ${(busy / requests).toFixed(1)} µs busy per request\n`,
  );
  console.log('| where | share | µs/req |\n| --- | ---: | ---: |');
  for (const [group, micros] of [...byGroup].sort((a, b) => b[1] - a[1])) {
    console.log(`| ${group} | ${((100 * micros) / busy).toFixed(1)}% | ${(micros / requests).toFixed(1)} |`);
  }
  if (top > 0 && ours.size > 0) {
    console.log('\nour functions (self time, µs/req):');
    for (const [where, micros] of [...ours].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`  ${(micros / requests).toFixed(2).padStart(6)} ${where}`);
    }
  }
}
