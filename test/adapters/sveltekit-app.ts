import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { root } from '../support/build.js';

/** SvelteKit 3 asks for Node 22.17 or later: its build and its server run on the Node 24 the suite installs. */
export const node24 = join(root, 'node_modules/node24/bin/node');

/**
 * A SvelteKit app whose `src/routes/webhooks/[account]/+server.ts` is the guide's route (`POST` and `fallback`
 * hand the Request and the route's params to the Fetch handler), built by `vite build`, and `serve.mjs`, which serves the built app the way
 * adapter-node does: SvelteKit's own `getRequest`/`setResponse` around `Server.respond`, with adapter-node's
 * default body limit. The route's receiver is the conformance one, for the profile named in PROFILE.
 */
const files: Record<string, string> = {
  'package.json': '{ "type": "module" }\n',
  'vite.config.js': `import { sveltekit } from '@sveltejs/kit/vite';
export default {
  plugins: [sveltekit()],
  logLevel: 'warn',
  // Express's cookie (the repository's) is older than SvelteKit's: bundle SvelteKit's own.
  ssr: { noExternal: ['cookie'] },
  resolve: {
    alias: {
      'messaging-webhooks/fetch': '${join(root, 'adapters/fetch.ts')}',
      'conformance-receiver': '${join(root, 'test/adapters/conformance-receiver.ts')}',
    },
  },
};
`,
  'src/app.html': '<!doctype html><html><head>%sveltekit.head%</head><body>%sveltekit.body%</body></html>\n',
  'src/lib/conformance.ts': `import { CONFORMANCE_PROFILES, createConformanceReceiver } from 'conformance-receiver';
const profile = CONFORMANCE_PROFILES.find((each) => each.name === process.env.PROFILE);
export const conformance = createConformanceReceiver(profile);
`,
  'src/routes/webhooks/[account]/+server.ts': `import { createFetchHandler } from 'messaging-webhooks/fetch';
import { conformance } from '../../../lib/conformance';

const handle = createFetchHandler(conformance.receiver);

export const POST = ({ request, params }: { request: Request; params: Record<string, string> }) =>
  handle(request, { params });
export const fallback = POST;
`,
  'src/routes/handled/+server.ts': `import { conformance } from '../../lib/conformance';
export const GET = () => Response.json(conformance.handled);
`,
  'serve.mjs': `import { createServer } from 'node:http';
import { getRequest, setResponse } from '@sveltejs/kit/node';
import { Server } from './.svelte-kit/output/server/index.js';
import { manifest } from './.svelte-kit/output/server/manifest.js';

const app = new Server(manifest);
await app.init({ env: process.env });
const server = createServer(async (req, res) => {
  const request = getRequest({ base: 'http://' + req.headers.host, request: req, response: res, bodySizeLimit: 512 * 1024 });
  await setResponse(res, await app.respond(request, { getClientAddress: () => req.socket.remoteAddress }));
});
server.listen(0, '127.0.0.1', () => console.log('sveltekit listening on http://127.0.0.1:' + server.address().port));
`,
};

/** Writes and builds the app under the repository's tmp/ (so it resolves packages from its node_modules). */
export function buildSvelteKitApp(): { dir: string; remove(): void } {
  const dir = join(root, 'tmp', `sveltekit-${randomUUID()}`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const built = spawnSync(node24, [join(root, 'node_modules/vite/bin/vite.js'), 'build'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const remove = () => rmSync(dir, { recursive: true, force: true });
  if (built.status !== 0) {
    remove();
    throw new Error(`vite build failed:\n${built.stdout}\n${built.stderr}`);
  }
  return { dir, remove };
}
