import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FetchHandler } from '../../adapters/fetch.js';

/**
 * Test-only bridge from node:http to the Fetch handler, the way @hono/node-server and similar do it: the body
 * is passed on as a stream with backpressure (not buffered), so the handler's own limit is what stops reading.
 */
export function bridge(handler: FetchHandler) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
    }
    const method = req.method ?? 'GET';
    const hasBody = method !== 'GET' && method !== 'HEAD';
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method,
      headers,
      ...(hasBody ? { body: bodyStream(req, res), duplex: 'half' } : {}),
    } as RequestInit);
    const response = await handler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  };
}

/** A request body as a Web stream; when the handler cancels it, the connection closes after the answer. */
function bodyStream(req: IncomingMessage, res: ServerResponse): ReadableStream<Uint8Array> {
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on('data', (chunk: Buffer) => {
        if (cancelled) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) req.pause();
      });
      req.on('end', () => {
        if (!cancelled) controller.close();
      });
      req.on('error', (error) => {
        if (!cancelled) controller.error(error);
      });
    },
    pull() {
      req.resume();
    },
    cancel() {
      cancelled = true;
      res.shouldKeepAlive = false;
    },
  });
}
