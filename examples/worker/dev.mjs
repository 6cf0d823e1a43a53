// Runs the Worker locally in workerd (Cloudflare's runtime) through Miniflare: `npm run example:worker` at the
// repository root. It bundles worker.mjs with esbuild as wrangler does, Worker conditions first.
// PORT (default 8787) and WEBHOOK_SECRET (default: a development secret, never for production) configure it.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { exampleSecret, printHowToSend } from '../example-receiver.mjs';

const secret = exampleSecret();
const { outputFiles } = await build({
  entryPoints: [fileURLToPath(new URL('worker.mjs', import.meta.url))],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  conditions: ['workerd', 'worker', 'browser'],
  mainFields: ['module', 'main'],
  write: false,
});
const mf = new Miniflare({
  modules: true,
  script: outputFiles[0].text,
  compatibilityDate: '2026-05-03',
  bindings: { WEBHOOK_SECRET: secret },
  // As wrangler.toml binds it: the dedupe store's Durable Object class, SQLite-backed.
  durableObjects: { WEBHOOK_DEDUPE: { className: 'DedupeDurableObject', useSQLite: true } },
  host: '127.0.0.1',
  port: Number(process.env.PORT ?? 8787),
});
const url = await mf.ready;
printHowToSend(new URL('/webhooks', url).href, secret);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await mf.dispose();
    process.exit(0);
  });
}
