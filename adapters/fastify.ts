import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import fp from 'fastify-plugin';
import {
  type AdapterReceiver,
  configError,
  nodeBodyReader,
  type Outcome,
  type ReceiveRequest,
} from '../src/adapter.js';

export interface FastifyWebhooksOptions {
  /** The receiver that answers every request to `path`. */
  receiver: AdapterReceiver;
  /** The webhook route, e.g. '/webhooks'. Every method reaches the receiver (others get its 405). */
  path: string;
  /**
   * How long `app.close()` waits for handlers still running before it releases their claims (their events are
   * then redelivered). Default: until they finish.
   */
  closeTimeoutMs?: number;
}

/**
 * What Fastify sends for the outcome's `application/json` (it adds the charset to any JSON type without one),
 * given as it is: Fastify would otherwise build this string anew on every reply.
 */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The outcome's content type as Fastify would send it; the core decides it, the adapter only spells it. */
const fastifyType = (type: string): string => (type === 'application/json' ? JSON_CONTENT_TYPE : type);

const USAGE = "app.register(webhooks, { receiver: createReceiver({ secrets }), path: '/webhooks' })";

async function webhooksPlugin(fastify: FastifyInstance, options: FastifyWebhooksOptions): Promise<void> {
  const { receiver, path, closeTimeoutMs } = validateOptions(options);
  let closing = false;
  // fastify.close() closes the server, which waits for the requests in flight; their answers then close
  // the connection, or a client's idle keep-alive connection would hold close() until it times out.
  fastify.addHook('preClose', async () => {
    closing = true;
  });
  // Runs once the server is closed: waits for work acknowledged early (ack: 'async') to settle.
  fastify.addHook('onClose', async () => {
    await receiver.close(closeTimeoutMs === undefined ? {} : { timeoutMs: closeTimeoutMs });
  });
  const send = (reply: FastifyReply, outcome: Outcome): FastifyReply => {
    if (closing && reply.request.raw.httpVersionMajor < 2) reply.header('connection', 'close');
    reply.code(outcome.status);
    // type() sets content-type as given, where header() would lowercase each name anew. Fastify sizes every
    // payload itself (again after an onSend hook changed it), so the outcome's content-length is left to it.
    for (const name in outcome.headers) {
      const value = outcome.headers[name] as string;
      if (name === 'content-type') reply.type(fastifyType(value));
      else if (name !== 'content-length') reply.header(name, value);
    }
    return reply.send(outcome.body);
  };
  // A child scope keeps the raw-stream parsing and the body error mapping to the webhook route: a
  // content-type parser added in the fastify-plugin scope itself would replace JSON parsing app-wide.
  fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Every content type is handed on unread: the receiver, not Fastify, decides which ones it accepts (415),
    // and reads the body itself under its size limit and body deadline (Fastify's requestTimeout is off).
    // JSON is named as well: Fastify caches the parser it finds for a named type, while a catch-all alone
    // makes it parse the Content-Type header anew on every request.
    const handOn = (_request: FastifyRequest, payload: unknown, done: (error: null, body: unknown) => void) =>
      done(null, payload);
    scope.addContentTypeParser('application/json', handOn);
    scope.addContentTypeParser('*', handOn);
    // The route as registered (with any prefix), read once: request.routeOptions builds a new object per read.
    let route = path;
    scope.addHook('onRoute', (options) => {
      route = options.url;
    });
    const receive = (request: FastifyRequest) =>
      receiver.receive({
        method: request.method,
        headers: request.headers,
        url: request.url,
        route,
        params: request.params as ReceiveRequest['params'],
        readBody: nodeBodyReader(request.raw),
      });
    scope.setErrorHandler(async (error: FastifyError, request, reply) => {
      // Fastify refused a Content-Type header it cannot parse before the parser ran; the core decides
      // whether it is JSON, and reads the untouched body itself if so. Other errors are the app's.
      if (error.code !== 'FST_ERR_CTP_INVALID_MEDIA_TYPE') throw error;
      return send(reply, await receive(request));
    });
    scope.all(path, routeHandler(receive, send));
  });
}

/**
 * Fastify's callback style: the handler returns nothing and sends once the outcome is in. An async handler
 * would resolve with the reply, which Fastify then awaits as a thenable: turns of the microtask queue on every
 * request. A failure is Fastify's to answer, as it would be for an async handler.
 * The walk starts a microtask after the handler, as in receiveNodeRequest: the body that came with the headers
 * is then all in the stream's buffer, and is read with no promise.
 */
function routeHandler(
  receive: (request: FastifyRequest) => Promise<Outcome>,
  send: (reply: FastifyReply, outcome: Outcome) => FastifyReply,
): (request: FastifyRequest, reply: FastifyReply) => void {
  const respond = (request: FastifyRequest, reply: FastifyReply) =>
    receive(request)
      .then((outcome) => send(reply, outcome))
      .catch((error: unknown) => reply.send(error));
  return (request, reply) => {
    queueMicrotask(() => respond(request, reply));
  };
}

function validateOptions(options: Partial<FastifyWebhooksOptions> | undefined): FastifyWebhooksOptions {
  const receiver = options?.receiver;
  if (
    typeof receiver?.receive !== 'function' ||
    typeof receiver.close !== 'function' ||
    typeof receiver.limits?.maxBodyBytes !== 'number'
  ) {
    throw configError(
      `messaging-webhooks/fastify needs the receiver to mount, got ${receiver === undefined ? 'none' : 'something else'}: ${USAGE}.`,
    );
  }
  const path = options?.path;
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw configError(
      `messaging-webhooks/fastify needs the route path as a string starting with "/", got ${JSON.stringify(path) ?? 'none'}: ${USAGE}.`,
    );
  }
  const closeTimeoutMs = options?.closeTimeoutMs;
  if (closeTimeoutMs !== undefined && !(typeof closeTimeoutMs === 'number' && closeTimeoutMs >= 0)) {
    throw configError(
      `messaging-webhooks/fastify closeTimeoutMs must be a number of milliseconds (0 or more), got ${String(closeTimeoutMs)}.`,
    );
  }
  return closeTimeoutMs === undefined ? { receiver, path } : { receiver, path, closeTimeoutMs };
}

/**
 * The Fastify plugin: `app.register(webhooks, { receiver, path: '/webhooks' })`. Only its route gets the raw
 * body; the rest of the app parses JSON as before. The receiver reads it under its own `maxBodyBytes` and
 * `bodyTimeoutMs`.
 */
export const webhooks: FastifyPluginAsync<FastifyWebhooksOptions> = fp(webhooksPlugin, {
  fastify: '4.x || 5.x',
  name: 'messaging-webhooks',
});

export default webhooks;
