import { createFetchApp } from './conformance-app.js';

const app = createFetchApp();

export default {
  fetch(request: Request, _env: unknown, ctx: { waitUntil(work: Promise<unknown>): void }) {
    return app.fetch(request, ctx);
  },
};
