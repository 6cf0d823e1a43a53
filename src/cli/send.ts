import { createEvent } from '../events/sample-event.js';
import { isAcknowledged, post, signedDelivery } from '../sending/http.js';
import { BIN, type Command, parseDelivery, SIGNING_HELP, UsageError } from './args.js';
import { escapeControls, formatMs, palette, prettyBody } from './output.js';

const help = `Usage: ${BIN} send <url> --secret S [--type T] [--data JSON] [--header NAME]

Sends one signed event (a valid test event of the type, with --data merged into its data) and prints
the answer: status, body and time. Exit code 1 when the answer is not 2xx.

  --type T          event type (default message.delivered)
  --data JSON       fields merged into the event's data, e.g. '{"operator":"op_x"}'
${SIGNING_HELP}

Example:
  ${BIN} send http://localhost:3000/webhooks --secret "$WEBHOOK_SECRET" --data '{"to":"+15550100"}'`;

export const send: Command = {
  name: 'send',
  summary: 'send one signed event to a URL',
  help,
  async run(argv) {
    const { values, url, sign } = parseDelivery('send', argv, {
      type: { type: 'string' },
      data: { type: 'string' },
    });
    const event = createEvent(values.type ?? 'message.delivered', { data: parseData(values.data) });
    const delivery = signedDelivery(JSON.stringify(event), sign);
    const color = palette();
    process.stdout.write(`${color.dim(`POST ${url}  ${event.type} ${event.id}`)}\n`);
    const answer = await post(url, delivery);
    if (answer.status === 0) {
      process.stdout.write(
        `${color.red('no answer')}: ${escapeControls(String(answer.error))} (${formatMs(answer.ms)})\n`,
      );
      return 1;
    }
    const ok = isAcknowledged(answer);
    const status = ok ? color.green(String(answer.status)) : color.red(String(answer.status));
    const notes = [
      answer.reason,
      answer.duplicate ? 'duplicate' : undefined,
      answer.location && `→ ${answer.location}`,
    ];
    process.stdout.write(
      `${status} in ${formatMs(answer.ms)}${notes
        .filter(Boolean)
        .map((note) => `  ${escapeControls(String(note))}`)
        .join('')}\n`,
    );
    if (answer.body) process.stdout.write(`${prettyBody(answer.body)}\n`);
    return ok ? 0 : 1;
  },
};

function parseData(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new UsageError(
      `send: --data is not valid JSON. Quote it for the shell: --data '{"operator":"op_x"}'.`,
    );
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new UsageError('send: --data must be a JSON object, e.g. --data \'{"operator":"op_x"}\'.');
  }
  return data as Record<string, unknown>;
}
