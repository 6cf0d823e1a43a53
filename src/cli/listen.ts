import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readNodeBody, writeNodeOutcome } from '../adapter.js';
import type { Outcome } from '../contract/outcome.js';
import { nextRequestId } from '../pipeline/1-read-verify.js';
import { createReceiver, type Receiver } from '../receiver/receiver.js';
import { isAcknowledged, post } from '../sending/http.js';
import {
  BIN,
  type Command,
  integer,
  noPositionals,
  parse,
  profileOption,
  requireSecret,
  SIGNING_HELP,
  signingOptions,
  signingProfile,
  UsageError,
} from './args.js';
import { escapeControls, escapeLines, formatMs, palette } from './output.js';
import { whenStarterEnds } from './wrapper-watch.js';

const help = `Usage: ${BIN} listen [--port P] [--host H] --secret S [--forward URL] [--profile NAME] [--header NAME]

A local receiver for development: verifies each delivery (any path), pretty-prints its event and answers
like the library does. With --forward, each verified event's raw body and signature headers are passed on
to URL before it is acknowledged; if that fails, the delivery is answered 500 and retried by its sender.

  --port P          port to listen on (default 3000; 0 picks a free one)
  --host H          address to listen on (default 127.0.0.1)
  --forward URL     pass verified events on to this URL
${SIGNING_HELP}

Example:
  ${BIN} listen --port 3000 --secret "$WEBHOOK_SECRET" --forward http://localhost:8080/webhooks`;

export const listen: Command = {
  name: 'listen',
  summary: 'a local receiver that verifies and prints events (and forwards them)',
  help,
  async run(argv) {
    const { values, positionals } = parse('listen', argv, {
      ...signingOptions,
      ...profileOption,
      port: { type: 'string' },
      host: { type: 'string' },
      forward: { type: 'string' },
    });
    noPositionals('listen', positionals);
    const profile = signingProfile('listen', values.profile, values.header);
    const secret = requireSecret('listen', values.secret, profile.secretFormat);
    const port = integer('listen', 'port', values.port, 3000, 0, 65535);
    const forward = values.forward === undefined ? undefined : requireForwardUrl(values.forward);
    const color = palette();
    const out = (line: string) => process.stdout.write(`${line}\n`);
    // What forwarding needs of each request (its raw bytes and signature) besides the parsed event, found
    // again in the handler under the request id this server gives the request.
    const deliveries = new Map<string, Pending>();
    const receiver = createReceiver({ secrets: secret, profile });
    receiver.onAny(async (event, ctx) => {
      out(
        // No mode: listen takes one secret, which does not say whether it is a live or a test one.
        `${color.bold(escapeControls(event.type))} ${escapeControls(event.id ?? '(no id)')} ${color.dim(ctx.requestId)}`,
      );
      out(escapeLines(JSON.stringify(event, null, 2)));
      const delivery = deliveries.get(ctx.requestId);
      if (forward && delivery?.body)
        await forwardTo(forward, delivery.body, delivery.req, profile.headers, out);
    });
    receiver.onError((error) => out(color.red(`  ${escapeControls(error.message)}`)));

    const server = serve(receiver, deliveries, (outcome, req) => out(describeOutcome(outcome, req, color)));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, values.host ?? '127.0.0.1', resolve);
    }).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'EADDRINUSE'
        ? new Error(`listen: port ${port} is in use. Pick another with --port, or --port 0 for a free one.`)
        : error;
    });
    const { address, port: bound } = server.address() as AddressInfo;
    const host = address.includes(':') ? `[${address}]` : address;

    return new Promise<number>((resolve) => {
      const stop = () => {
        stopWatching();
        server.close(() => resolve(0));
        server.closeAllConnections();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      // Printed once the handlers are in place: whoever waits for this line may send a signal at once.
      out(
        `Listening on http://${host}:${bound}/ (any path), verifying ${profile.format}${forward ? `, forwarding to ${forward}` : ''}`,
      );
      out(color.dim('Ctrl-C to stop.'));
      // A wrapper (npx) may end on a signal without passing it on: stop with it rather than listen on, orphaned,
      // and exit even if a connection still holds the server open: nobody is left to see this process.
      const stopWatching = whenStarterEnds(() => {
        stop();
        setTimeout(() => process.exit(0), 2000).unref();
      });
    });
  },
};

/** A request being answered: what forwarding needs of it besides its event. */
interface Pending {
  req: IncomingMessage;
  body?: Uint8Array;
}

/** The server: every request goes to the receiver under an id of its own, its raw body kept for forwarding. */
function serve(
  receiver: Receiver,
  deliveries: Map<string, Pending>,
  answered: (outcome: Outcome, req: IncomingMessage) => void,
): Server {
  return createServer((req, res) => {
    const requestId = nextRequestId();
    const delivery: Pending = { req };
    deliveries.set(requestId, delivery);
    void receiver
      .receive({
        requestId,
        method: req.method ?? 'GET',
        headers: req.headers,
        readBody: async (maxBytes, deadlineMs) => {
          const body = await readNodeBody(req, maxBytes, deadlineMs);
          if (body instanceof Uint8Array) delivery.body = body;
          return body;
        },
      })
      .then((outcome) => {
        deliveries.delete(requestId);
        writeNodeOutcome(res, outcome);
        answered(outcome, req);
      });
  });
}

async function forwardTo(
  url: string,
  body: Uint8Array,
  req: IncomingMessage,
  signed: readonly string[],
  out: (line: string) => void,
): Promise<void> {
  const headers: Record<string, string> = { 'content-type': String(req.headers['content-type']) };
  // Every header the profile reads (the signature, and its timestamp and id where the format has them).
  for (const name of signed) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const answer = await post(url, { body, headers });
  out(
    `  forwarded to ${url}: ${escapeControls(String(answer.status || answer.error))} in ${formatMs(answer.ms)}`,
  );
  if (!isAcknowledged(answer)) {
    throw new Error(
      `forward to ${url} answered ${answer.status || answer.error}${answer.reason ? ` ${answer.reason}` : ''}`,
    );
  }
}

function describeOutcome(outcome: Outcome, req: IncomingMessage, color: ReturnType<typeof palette>): string {
  const line = escapeControls(`${req.method} ${req.url} → ${outcome.status}`);
  if (outcome.status < 300) {
    return color.green(
      `${line}${outcome.duplicate ? ' duplicate (already processed, handlers not run)' : ''}`,
    );
  }
  const message = (JSON.parse(outcome.body) as { error?: { message?: string } }).error?.message ?? '';
  return color.red(`${line} ${outcome.reason}: ${escapeControls(message)}`);
}

function requireForwardUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    throw new UsageError(
      `listen: --forward '${url}' is not a URL. Give the full address, e.g. http://localhost:8080/webhooks.`,
    );
  }
}
