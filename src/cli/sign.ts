import { signRequest } from '../signature/index.js';
import { looksLikeMilliseconds } from '../signature/profile-text.js';
import {
  BIN,
  type Command,
  integer,
  noPositionals,
  PROFILE_HELP,
  parse,
  profileOption,
  requireSecret,
  signingProfile,
  UsageError,
} from './args.js';

const help = `Usage: ${BIN} sign --secret S [--timestamp T] [--profile NAME] [--id ID] < body.json

Signs the body read on stdin (its exact bytes) and prints what to send:
  - default profile: the signature header value t=…,v1=…
  - profiles with several headers (standard-webhooks): one 'name: value' line per header (curl -H @file)
  - body-signature: the body with its signature member, exactly as to send (no newline added)

  --secret S        the endpoint's signing secret (or set WEBHOOK_SECRET); never printed
  --timestamp T     unix seconds to sign with (default now)
${PROFILE_HELP}
  --id ID           message id, for profiles that sign one (default a new msg_…)
  -h, --help        this help

Example (curl):
  body='{"id":"evt_01","type":"message.delivered","data":{"message_id":"msg_1","to":"+15550100","operator":"op"}}'
  sig=$(printf %s "$body" | ${BIN} sign --secret "$WEBHOOK_SECRET")
  curl -H 'content-type: application/json' -H "webhook-signature: $sig" --data-raw "$body" http://localhost:3000/webhooks`;

export const sign: Command = {
  name: 'sign',
  summary: 'sign a body read on stdin; prints the signature header value (or what the profile sends)',
  help,
  async run(argv) {
    const { values, positionals } = parse('sign', argv, {
      secret: { type: 'string' },
      timestamp: { type: 'string' },
      id: { type: 'string' },
      ...profileOption,
      help: { type: 'boolean', short: 'h' },
    });
    noPositionals('sign', positionals);
    const profile = signingProfile('sign', values.profile);
    const secret = requireSecret('sign', values.secret, profile.secretFormat);
    // Unset: now, or the body's own timestamp for a profile that reads it from there.
    const timestamp = values.timestamp === undefined ? undefined : unixSeconds(values.timestamp);
    if (process.stdin.isTTY) {
      throw new UsageError(
        `sign: reads the body on stdin. Pipe it in: printf %s "$body" | ${BIN} sign --secret S`,
      );
    }
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    // The bytes as read, not text: a trailing newline is signed too, as the endpoint will receive it.
    const signed = signRequest({
      payload: Buffer.concat(chunks),
      secret,
      profile,
      ...(timestamp === undefined ? {} : { timestamp }),
      ...(values.id === undefined ? {} : { id: values.id }),
    });
    const names = Object.keys(signed.headers);
    if (profile.signatureHeader === undefined) process.stdout.write(signed.body);
    else if (names.length === 1) process.stdout.write(`${signed.headers[names[0] as string]}\n`);
    else process.stdout.write(names.map((name) => `${name}: ${signed.headers[name]}\n`).join(''));
    return 0;
  },
};

/** --timestamp: unix seconds. Milliseconds (what Date.now() gives) are refused saying so, with the seconds. */
function unixSeconds(value: string): number {
  const number = Number(value);
  if (Number.isSafeInteger(number) && looksLikeMilliseconds(number)) {
    throw new UsageError(
      `sign: --timestamp is in unix seconds, and '${value}' looks like milliseconds: pass ${Math.floor(number / 1000)} (date +%s prints now in seconds).`,
    );
  }
  return integer('sign', 'timestamp', value, 0, 0, 2 ** 40, ' (unix seconds, as date +%s prints)');
}
