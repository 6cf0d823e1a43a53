import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import fp from 'fastify-plugin';
import { BODY_TOO_LARGE, type BodyReader, type Outcome, WebhookConfigError } from '../src/index.js';
import type { AnyReceiver } from './any-receiver.js';
import { readNodeBody } from './node-io.js';

export interface FastifyWebhooksOptions {
  /** The receiver that answers every request to `path`. */
  receiver: AnyReceiver;
  /** The webhook route, e.g. '/webhooks'. Every method reaches the receiver (others get its 405). */
  path: string;
  /**
   * How long `app.close()` waits for handlers still running before it releases their claims (their events are
   * then redelivered). Default: until they finish.
   */
  closeTimeoutMs?: number;
}

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
    return reply.code(outcome.status).headers(outcome.headers).send(outcome.body);
  };
  // A child scope keeps the raw-bytes parsing and the body error mapping to the webhook route:
  // a content-type parser added in the fastify-plugin scope itself would replace JSON parsing app-wide.
  fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Every content type is kept as bytes: the receiver, not Fastify, decides which ones it accepts (415).
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.setErrorHandler(async (error: FastifyError, request, reply) => {
      const readBody = bodyFailureReader(error, request);
      if (readBody === undefined) throw error; // not about the body: the app's own error handler answers
      return send(
        reply,
        await receiver.receive({ method: request.method, headers: request.headers, readBody }),
      );
    });
    scope.all(path, { bodyLimit: receiver.limits.maxBodyBytes }, async (request, reply) =>
      send(
        reply,
        await receiver.receive({ method: request.method, headers: request.headers, rawBody: request.body }),
      ),
    );
  });
}

/**
 * Fastify reads the body before the handler runs; when that failed, replays the failure to the receiver as a
 * body reader so the core answers it (413, 400) like every adapter. Undefined for errors of another kind.
 */
function bodyFailureReader(error: FastifyError, request: FastifyRequest): BodyReader | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return async () => BODY_TOO_LARGE;
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return () => Promise.reject(error);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // Fastify refused a Content-Type header it cannot parse before reading the body; the core decides
      // whether it is JSON, and reads the untouched body itself if so.
      return (maxBytes) => readNodeBody(request.raw, maxBytes);
    default:
      return undefined;
  }
}

function validateOptions(options: Partial<FastifyWebhooksOptions> | undefined): FastifyWebhooksOptions {
  const receiver = options?.receiver;
  if (
    typeof receiver?.receive !== 'function' ||
    typeof receiver.close !== 'function' ||
    typeof receiver.limits?.maxBodyBytes !== 'number'
  ) {
    throw new WebhookConfigError(
      `messaging-webhooks/fastify needs the receiver to mount, got ${receiver === undefined ? 'none' : 'something else'}: ${USAGE}.`,
    );
  }
  const path = options?.path;
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new WebhookConfigError(
      `messaging-webhooks/fastify needs the route path as a string starting with "/", got ${JSON.stringify(path) ?? 'none'}: ${USAGE}.`,
    );
  }
  const closeTimeoutMs = options?.closeTimeoutMs;
  if (closeTimeoutMs !== undefined && !(typeof closeTimeoutMs === 'number' && closeTimeoutMs >= 0)) {
    throw new WebhookConfigError(
      `messaging-webhooks/fastify closeTimeoutMs must be a number of milliseconds (0 or more), got ${String(closeTimeoutMs)}.`,
    );
  }
  return closeTimeoutMs === undefined ? { receiver, path } : { receiver, path, closeTimeoutMs };
}

/**
 * The Fastify plugin: `app.register(webhooks, { receiver, path: '/webhooks' })`. Only its route gets the raw
 * bytes; the rest of the app parses JSON as before. `bodyLimit` follows the receiver's `maxBodyBytes`.
 */
export const webhooks: FastifyPluginAsync<FastifyWebhooksOptions> = fp(webhooksPlugin, {
  fastify: '5.x',
  name: 'messaging-webhooks',
});

export default webhooks;
