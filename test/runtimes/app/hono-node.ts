import { serve } from '@hono/node-server';
import { announce } from './conformance-app.js';
import { createHonoApp } from './hono-app.js';

serve({ fetch: createHonoApp().fetch, port: 0, hostname: '127.0.0.1' }, (info) => announce(info.port));
