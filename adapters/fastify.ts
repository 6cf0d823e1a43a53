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
  createAdapter,
  mountedReceiver,
  nodeRequest,
  type Outcome,
  type ReceiveRequest,
} from '../src/adapter.js';

/** `createFastifyPlugin(receiver, options)`: the route and how closing waits. */
export interface FastifyPluginOptions {
  /** The webhook route, e.g. '/webhooks'. Every method reaches the receiver (others get its 405). */
  path: string;
  /**
   * How long `app.close()` waits for handlers still running before it releases their claims (their events are
   * then redelivered). Default: until they finish.
   */
  closeTimeoutMs?: number;
}

/** The deprecated `webhooks` plugin's options: the receiver among them. */
export interface FastifyWebhooksOptions extends FastifyPluginOptions {
  /** The receiver that answers every request to `path`. */
  receiver: AdapterReceiver;
}

/**
 * What Fastify sends for the outcome's `application/json` (it adds the charset to any JSON type without one),
 * given as it is: Fastify would otherwise build this string anew on every reply.
 */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The outcome's content type as Fastify would send it; the core decides it, the adapter only spells it. */
const fastifyType = (type: string): string => (type === 'application/json' ? JSON_CONTENT_TYPE : type);

const NAME = 'messaging-webhooks/fastify';
const USAGE = "app.register(createFastifyPlugin(receiver, { path: '/webhooks' }))";
const OLD_USAGE = "app.register(webhooks, { receiver: createReceiver({ secrets }), path: '/webhooks' })";

async function webhooksPlugin(
  fastify: FastifyInstance,
  receiver: AdapterReceiver,
  options: FastifyPluginOptions,
): Promise<void> {
  const { path, closeTimeoutMs } = options;
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
    const handle = createAdapter<[FastifyRequest, FastifyReply], FastifyReply>(receiver, {
      name: NAME,
      usage: USAGE,
      read: (request) =>
        nodeRequest(request.raw, {
          url: () => request.url,
          route: () => route,
          params: () => request.params as ReceiveRequest['params'],
        }),
      write: (outcome, _request, reply) => send(reply, outcome),
    });
    scope.setErrorHandler(async (error: FastifyError, request, reply) => {
      // Fastify refused a Content-Type header it cannot parse before the parser ran; the core decides
      // whether it is JSON, and reads the untouched body itself if so. Other errors are the app's.
      if (error.code !== 'FST_ERR_CTP_INVALID_MEDIA_TYPE') throw error;
      return handle(request, reply);
    });
    // Fastify's callback style: the handler returns nothing and sends once the outcome is in. An async handler
    // would resolve with the reply, which Fastify then awaits as a thenable. A failure is Fastify's to answer,
    // as it would be for an async handler.
    scope.all(path, (request, reply) => {
      handle(request, reply).catch((error: unknown) => reply.send(error));
    });
  });
}

/** The route path and close timeout, checked at registration; `usage` ends each error. */
function checkedOptions(
  options: Partial<FastifyPluginOptions> | undefined,
  usage: string,
): FastifyPluginOptions {
  const path = options?.path;
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw configError(
      `${NAME} needs the route path as a string starting with "/", got ${JSON.stringify(path) ?? 'none'}: ${usage}.`,
    );
  }
  const closeTimeoutMs = options?.closeTimeoutMs;
  if (closeTimeoutMs !== undefined && !(typeof closeTimeoutMs === 'number' && closeTimeoutMs >= 0)) {
    throw configError(
      `${NAME} closeTimeoutMs must be a number of milliseconds (0 or more), got ${String(closeTimeoutMs)}.`,
    );
  }
  return closeTimeoutMs === undefined ? { path } : { path, closeTimeoutMs };
}

/**
 * The Fastify plugin for a receiver: `app.register(createFastifyPlugin(receiver, { path: '/webhooks' }))`. Only
 * its route gets the raw body; the rest of the app parses JSON as before. The receiver reads it under its own
 * `maxBodyBytes` and `bodyTimeoutMs`, and is closed when the app closes.
 */
export function createFastifyPlugin(
  receiver: AdapterReceiver,
  options: FastifyPluginOptions,
): FastifyPluginAsync {
  const held = mountedReceiver(receiver, { name: NAME, usage: USAGE }, { holds: true });
  const checked = checkedOptions(options, USAGE);
  return fp(async (fastify: FastifyInstance) => webhooksPlugin(fastify, held, checked), {
    fastify: '4.x || 5.x',
    name: 'messaging-webhooks',
  });
}

/**
 * @deprecated Use createFastifyPlugin(receiver, { path }) (every adapter is `create<Platform><Kind>`); removed
 * in 0.3. The plugin with the receiver among its options: `app.register(webhooks, { receiver, path })`.
 */
export const webhooks: FastifyPluginAsync<FastifyWebhooksOptions> = fp(
  async (fastify: FastifyInstance, options: FastifyWebhooksOptions) => {
    const held = mountedReceiver(options?.receiver, { name: NAME, usage: OLD_USAGE }, { holds: true });
    await webhooksPlugin(fastify, held, checkedOptions(options, OLD_USAGE));
  },
  { fastify: '4.x || 5.x', name: 'messaging-webhooks' },
);

/** @deprecated Use createFastifyPlugin(receiver, { path }); removed in 0.3. */
export default webhooks;
