// A Deno process serving DenoKvDedupeStore's operations to the test process (/store/<operation>), on the Deno
// KV database at the path it is given. Each request runs on a store of its own, so concurrent requests meet
// only in the database, as the instances of an app do.
import { DenoKvDedupeStore } from '../../../src/stores/deno-kv.js';
import type { DedupeStore } from '../../../src/stores/types.js';

declare const Deno: {
  args: string[];
  openKv(path: string): Promise<ConstructorParameters<typeof DenoKvDedupeStore>[0]['kv']>;
  serve(
    options: { hostname: string; port: number; onListen(address: { port: number }): void },
    handler: (request: Request) => Promise<Response>,
  ): unknown;
};

const kv = await Deno.openKv(Deno.args[0] as string);

async function operate(store: DedupeStore, url: URL): Promise<unknown> {
  const key = JSON.parse(url.searchParams.get('key') as string) as string;
  const token = url.searchParams.get('token') as string;
  const ms = Number(url.searchParams.get('ms'));
  const operation = url.pathname.slice('/store/'.length);
  if (operation === 'claim') return store.claim(key, ms);
  if (operation === 'complete') return store.complete(key, token, ms);
  if (operation === 'renew') return store.renew(key, token, ms);
  return store.release(key, token);
}

Deno.serve(
  {
    hostname: '127.0.0.1',
    port: 0,
    onListen: ({ port }) => console.log(`store bridge listening on http://127.0.0.1:${port}`),
  },
  async (request) => {
    const url = new URL(request.url);
    if (url.pathname === '/race') {
      // Claims of one key started together inside Deno, each on its own store: every read comes before any
      // commit, so only the database's checked commit can leave one claimant.
      const key = url.searchParams.get('key') as string;
      const claims = Array.from({ length: 20 }, () => new DenoKvDedupeStore({ kv }).claim(key, 60_000));
      return Response.json((await Promise.all(claims)).map((claim) => claim.status));
    }
    const store = new DenoKvDedupeStore({
      kv,
      operationTimeoutMs: Number(url.searchParams.get('timeout') ?? 3000),
    });
    try {
      return Response.json({ result: await operate(store, url) });
    } catch (error) {
      return Response.json({ error: { name: (error as Error).name, message: (error as Error).message } });
    }
  },
);
