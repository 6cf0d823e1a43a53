import type { IncomingMessage, ServerResponse } from 'node:http';
import { nextRequestId } from '../pipeline/1-read-verify.js';
import { type ApiContext, handleApi } from './api.js';
import { CONSOLE_HTML } from './console-page.js';
import { type ConsoleContext, consoleAction, consoleState, streamConsole } from './console-routes.js';
import { guardRequest } from './host-guard.js';
import { ApiError, sendError, sendJson } from './http-io.js';

/** The emulator's request listener: the API under /v1, the console at /, every failure answered as the API's error. */
export function createRouter(
  allowedHosts: ReadonlySet<string>,
  api: ApiContext,
  consoleContext: ConsoleContext,
): (req: IncomingMessage, res: ServerResponse) => void {
  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = nextRequestId();
    try {
      guardRequest(req, allowedHosts);
      const url = new URL(req.url ?? '/', 'http://emulator.local');
      if (url.pathname.startsWith('/v1/')) return await handleApi(api, req, res, url, requestId);
      if (req.method === 'GET' && url.pathname === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(CONSOLE_HTML);
        return;
      }
      if (req.method === 'GET' && url.pathname === '/console/state')
        return sendJson(res, 200, consoleState(consoleContext));
      if (req.method === 'GET' && url.pathname === '/console/stream')
        return streamConsole(consoleContext, req, res);
      if (req.method === 'POST' && url.pathname === '/console/actions')
        return await consoleAction(consoleContext, req, res);
      throw new ApiError(
        404,
        'not_found',
        `No endpoint ${req.method} ${url.pathname}: the API is under /v1, the console at /.`,
      );
    } catch (error) {
      if (res.headersSent) return void res.destroy();
      const known =
        error instanceof ApiError
          ? error
          : new ApiError(500, 'internal_error', 'The emulator failed on this request; see its output.');
      if (!(error instanceof ApiError)) console.error(error);
      sendError(res, known, requestId);
    }
  }
  return (req, res) => void route(req, res);
}
