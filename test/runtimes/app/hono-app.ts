import { Hono } from 'hono';
import { lazyConformanceApp } from './conformance-app.js';

/** The handler mounted on a Hono route, as the README shows it: the raw Request and the route's params go to the adapter. */
export function createHonoApp(): Hono {
  const app = lazyConformanceApp();
  const hono = new Hono();
  hono.all('/webhooks/:account', (c) => app().webhooks(c.req.raw, { params: c.req.param() }));
  hono.get('/handled', () => app().handled());
  return hono;
}
