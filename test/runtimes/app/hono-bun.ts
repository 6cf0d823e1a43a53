import { announce } from './conformance-app.js';
import { createHonoApp } from './hono-app.js';

declare const Bun: {
  serve(options: { port: number; hostname: string; fetch(request: Request): Response | Promise<Response> }): {
    port: number;
  };
};

const app = createHonoApp();
announce(Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => app.fetch(request) }).port);
