import { signPayload } from '../signature.js';
import { BIN, type Command, integer, noPositionals, parse, requireSecret, UsageError } from './args.js';

const help = `Usage: ${BIN} sign --secret S [--timestamp T] < body.json

Signs the body read on stdin (its exact bytes) and prints the signature header value t=…,v1=…

  --secret S        the endpoint's signing secret (or set WEBHOOK_SECRET); never printed
  --timestamp T     unix seconds to sign with (default now)
  -h, --help        this help

Example (curl):
  body='{"id":"evt_01","type":"message.delivered","data":{"message_id":"msg_1","to":"+15550100","operator":"op"}}'
  sig=$(printf %s "$body" | ${BIN} sign --secret "$WEBHOOK_SECRET")
  curl -H 'content-type: application/json' -H "webhook-signature: $sig" --data-raw "$body" http://localhost:3000/webhooks`;

export const sign: Command = {
  name: 'sign',
  summary: 'sign a body read on stdin; prints the signature header value',
  help,
  async run(argv) {
    const { values, positionals } = parse('sign', argv, {
      secret: { type: 'string' },
      timestamp: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    });
    noPositionals('sign', positionals);
    const secret = requireSecret('sign', values.secret);
    const timestamp = integer(
      'sign',
      'timestamp',
      values.timestamp,
      Math.floor(Date.now() / 1000),
      0,
      2 ** 40,
    );
    if (process.stdin.isTTY) {
      throw new UsageError(
        `sign: reads the body on stdin. Pipe it in: printf %s "$body" | ${BIN} sign --secret S`,
      );
    }
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    // The bytes as read, not text: a trailing newline is signed too, as the endpoint will receive it.
    process.stdout.write(`${signPayload({ payload: Buffer.concat(chunks), secret, timestamp })}\n`);
    return 0;
  },
};
