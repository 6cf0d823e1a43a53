import { Hono } from 'hono';
import { lazyConformanceApp } from './conformance-app.js';

/** The handler mounted on a Hono route, as the README shows it: the raw Request goes to the adapter. */
export function createHonoApp(): Hono {
  const app = lazyConformanceApp();
  const hono = new Hono();
  hono.all('/webhooks', (c) => app().webhooks(c.req.raw));
  hono.get('/handled', () => app().handled());
  return hono;
}
