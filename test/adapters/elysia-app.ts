// The Fetch handler mounted on Elysia routes, run by real Bun from the sources (Bun runs TypeScript itself).
// Started by elysia.test.ts with the signature profile's name as its argument; prints the port it listens on.
import { Elysia } from 'elysia';
import { createFetchHandler } from '../../adapters/fetch.js';
import { CONFORMANCE_PROFILES, createConformanceReceiver } from './conformance-receiver.js';

const profile = CONFORMANCE_PROFILES.find((each) => each.name === process.argv[2]) ?? CONFORMANCE_PROFILES[0];
const { receiver, handled } = createConformanceReceiver(profile);
const handle = createFetchHandler(receiver);

const app = new Elysia()
  // The guide's route: parse 'none' leaves the body unread; all: other methods get the handler's 405.
  .all('/webhooks/:account', ({ request, params }) => handle(request, { params }), { parse: 'none' })
  // The mistake the guide warns of: a handler that names `body` makes Elysia parse it first.
  .post('/parsed', ({ request, body }) => (body === undefined ? new Response(null) : handle(request)))
  .use(
    // A hook that reads the body makes Elysia parse it for every route of its app, unless the route says 'none'.
    new Elysia({ prefix: '/hooked' })
      .onBeforeHandle(({ body }) => {
        void body;
      })
      .post('/parsed', ({ request }) => handle(request))
      .post('/raw', ({ request }) => handle(request), { parse: 'none' }),
  )
  .get('/handled', () => Response.json(handled))
  .listen({ port: 0, hostname: '127.0.0.1' });

console.log(`elysia target listening on http://127.0.0.1:${app.server?.port}`);
