import { announce, createFetchApp } from './conformance-app.js';

declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen(address: { port: number }): void },
    handler: (request: Request) => Promise<Response>,
  ): unknown;
};

const app = createFetchApp();
Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: ({ port }) => announce(port) }, (request) =>
  app.fetch(request),
);
