import { announce, createFetchApp } from './conformance-app.js';

declare const Bun: {
  serve(options: { port: number; hostname: string; fetch(request: Request): Promise<Response> }): {
    port: number;
  };
};

const app = createFetchApp();
announce(Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => app.fetch(request) }).port);
