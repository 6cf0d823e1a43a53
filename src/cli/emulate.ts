import { readFileSync } from 'node:fs';
import { WebhookConfigError } from '../base/errors.js';
import { attemptLine } from '../emulator/attempt-line.js';
import { type Emulator, startEmulator } from '../emulator/emulator.js';
import type { EmulatorOptions, EmulatorSeedData } from '../emulator/options.js';
import {
  BIN,
  type Command,
  fraction,
  integer,
  noPositionals,
  parse,
  requireSecret,
  requireUrl,
  signingProfile,
  UsageError,
} from './args.js';
import { organizationsFrom } from './emulate-organizations.js';
import { palette } from './output.js';

const help = `Usage: ${BIN} emulate [--endpoint URL] --secret S [options]

A local Messaging Service: its API under /v1 (messages, campaigns, OTP, contacts, webhook test), each
message moving queued → submitted → delivered or failed, the delivery events sent as signed webhooks to
your endpoint with retries, and a web console at / to watch and act on them. Everything is in memory.

Modes (each has its own keys, endpoint, signing secret and quota):
  --endpoint URL       test mode's webhook endpoint (without one, events are recorded, not sent)
  --secret S           test mode's signing secret (or set WEBHOOK_SECRET); never printed
  --test-key K         test mode's API key (default sk_test_emulator)
  --live-endpoint URL  live mode's webhook endpoint
  --live-secret S      live mode's signing secret (or set LIVE_WEBHOOK_SECRET; default random)
  --live-key K         live mode's API key (default sk_live_emulator)
  --rate-limit N       requests per second per key before 429 rate_limited (default 100 test, 1000 live)
Several organizations (one endpoint and secret each, instead of --endpoint and --secret):
  --org NAME=URL       an organization and its test webhook endpoint (repeat for more); its API keys are
                       sk_test_NAME and sk_live_NAME, and a message sent with them is signed with its
                       secret and posted to its URL
  --org-secret NAME=S  the organization's test signing secret (or set WEBHOOK_SECRET_NAME, the name in
                       capitals with - as _); never printed
Server and data:
  --port P             port (default 4010; 0 picks a free one)
  --host H             address (default 127.0.0.1)
  --allowed-host NAME  a host name the emulator answers to besides localhost and IP addresses (repeat for
                       more), e.g. its name in a Docker network; other names get 403 (DNS rebinding guard)
  --data FILE          JSON with senders, templates and groups of contacts (default: a small demo set)
Lifecycle:
  --submit-ms MS       queued → submitted after MS (default 200)
  --result-ms MS       submitted → delivered or failed after MS more (default 600)
  --failure-rate R     fraction of messages that fail (default 0)
  --failure-event T    the failure event's type (default message.failed)
  --seed N             seed of every random choice, to replay a run (default random, printed)
Webhook retries (exponential backoff, full jitter):
  --max-attempts A     attempts per delivery (default 6)
  --retry-base-ms MS   first backoff ceiling, doubling each attempt (default 100)
  --retry-cap-ms MS    largest backoff ceiling (default 2000)
Chaos, to test replay safety:
  --copies R           fraction of events sent twice at once
  --reorder-ms MS      hold each event up to MS so they arrive out of order
  --delay-ms MS        hold every event MS before its first attempt
  --tamper R           fraction of first attempts with the body changed after signing
  --stale R            fraction of first attempts signed an hour ago
  --profile NAME       signature format: default, standard-webhooks, body-signature (default: default)
  --header NAME        signature header name of the default profile (default webhook-signature)
  -h, --help           this help

Each webhook attempt is printed as one line: time, organization (when several), mode, event type and id,
URL, answer and attempt number.

Examples:
  WEBHOOK_SECRET=whsec_… ${BIN} emulate --endpoint http://localhost:3000/webhooks
  WEBHOOK_SECRET_ACME=whsec_… WEBHOOK_SECRET_GLOBEX=whsec_… ${BIN} emulate \\
    --org acme=http://localhost:3000/webhooks/acme --org globex=http://localhost:3000/webhooks/globex`;

const number = (name: string, value: string | undefined, fallback: number) =>
  integer('emulate', name, value, fallback, 0, 3_600_000);

/** The string options, each read as text and checked where it is used. */
const TEXT_OPTIONS = [
  'endpoint',
  'secret',
  'test-key',
  'live-endpoint',
  'live-secret',
  'live-key',
  'rate-limit',
  'port',
  'host',
  'data',
  'submit-ms',
  'result-ms',
  'failure-rate',
  'failure-event',
  'seed',
  'max-attempts',
  'retry-base-ms',
  'retry-cap-ms',
  'copies',
  'reorder-ms',
  'delay-ms',
  'tamper',
  'stale',
  'header',
  'profile',
] as const;

export const emulate: Command = {
  name: 'emulate',
  summary: 'a local Messaging Service: API, signed webhooks with retries, web console',
  help,
  async run(argv) {
    const text = { type: 'string' } as const;
    const { values, positionals } = parse('emulate', argv, {
      help: { type: 'boolean', short: 'h' },
      'allowed-host': { type: 'string', multiple: true },
      org: { type: 'string', multiple: true },
      'org-secret': { type: 'string', multiple: true },
      ...Object.fromEntries(TEXT_OPTIONS.map((name) => [name, text])),
    });
    noPositionals('emulate', positionals);
    const get = (name: (typeof TEXT_OPTIONS)[number]) => (values as Record<string, string | undefined>)[name];
    const lists = values as { 'allowed-host'?: string[]; org?: string[]; 'org-secret'?: string[] };
    const several = lists.org !== undefined || lists['org-secret'] !== undefined;
    let options = emulatorOptions(get, lists['allowed-host'] ?? [], several);
    if (several) {
      const { test, live: _live, ...shared } = options;
      const orgs = organizationsFrom(lists.org ?? [], lists['org-secret'] ?? [], get, test?.rateLimit);
      options = { ...shared, organizations: orgs };
    }
    options.onAttempt = (attempt) => process.stdout.write(`${attemptLine(attempt, several)}\n`);
    const emulator = await startEmulator(options).catch((error: { code?: string }) => {
      if (error instanceof WebhookConfigError) throw new UsageError(`emulate: ${error.message}`);
      if (error.code !== 'EADDRINUSE') throw error;
      throw new UsageError(`emulate: port ${options.port} is in use. Pick another with --port, or --port 0.`);
    });
    return new Promise<number>((resolve) => {
      const stop = () => void emulator.close().then(() => resolve(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      // Printed once the handlers are in place: whoever waits for the banner may send a signal at once.
      printBanner(emulator);
    });
  },
};

function emulatorOptions(
  get: (name: (typeof TEXT_OPTIONS)[number]) => string | undefined,
  allowedHosts: string[],
  organizations: boolean,
): EmulatorOptions {
  const endpoint = (name: 'endpoint' | 'live-endpoint') =>
    get(name) === undefined ? undefined : requireUrl('emulate', [get(name) as string]);
  const rateLimit =
    get('rate-limit') === undefined
      ? undefined
      : { requests: number('rate-limit', get('rate-limit'), 0), windowSeconds: 1 };
  const liveSecret = get('live-secret') ?? process.env.LIVE_WEBHOOK_SECRET;
  const options: EmulatorOptions = {
    ...readData(get('data')),
    port: integer('emulate', 'port', get('port'), 4010, 0, 65535),
    host: get('host') ?? '127.0.0.1',
    allowedHosts,
    test: {
      endpoint: endpoint('endpoint'),
      // Several organizations take their secrets from --org-secret: the single one's is not asked for.
      ...(organizations ? {} : { secret: requireSecret('emulate', get('secret')) }),
      keys: [get('test-key') ?? 'sk_test_emulator'],
      ...(rateLimit ? { rateLimit } : {}),
    },
    live: {
      endpoint: endpoint('live-endpoint'),
      ...(liveSecret ? { secret: requireSecret('emulate', liveSecret) } : {}),
      keys: [get('live-key') ?? 'sk_live_emulator'],
      ...(rateLimit ? { rateLimit } : {}),
    },
    schedule: {
      submitMs: number('submit-ms', get('submit-ms'), 200),
      resultMs: number('result-ms', get('result-ms'), 600),
      failureRate: fraction('emulate', 'failure-rate', get('failure-rate')),
    },
    failureEvent: get('failure-event') ?? 'message.failed',
    retry: {
      maxAttempts: integer('emulate', 'max-attempts', get('max-attempts'), 6, 1, 100),
      baseMs: number('retry-base-ms', get('retry-base-ms'), 100),
      capMs: number('retry-cap-ms', get('retry-cap-ms'), 2000),
    },
    chaos: {
      copies: fraction('emulate', 'copies', get('copies')),
      reorderMs: number('reorder-ms', get('reorder-ms'), 0),
      delayMs: number('delay-ms', get('delay-ms'), 0),
      tamper: fraction('emulate', 'tamper', get('tamper')),
      stale: fraction('emulate', 'stale', get('stale')),
    },
    profile: signingProfile('emulate', get('profile'), get('header')),
  };
  if (get('seed') !== undefined) options.seed = integer('emulate', 'seed', get('seed'), 0, 0, 2 ** 32 - 1);
  return options;
}

function printBanner(emulator: Emulator): void {
  const color = palette();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`Messaging Service emulator on ${emulator.url} (console: ${emulator.url}/)`);
  const organizations = Object.entries(emulator.organizations);
  for (const [name, modes] of organizations) {
    const whose = organizations.length > 1 || name !== 'default' ? `${name} ` : '';
    for (const mode of ['test', 'live'] as const) {
      const { keys, endpoint: url } = modes[mode];
      out(`  ${whose}${mode}: key ${keys.join(', ')}, webhooks to ${url ?? 'nowhere (recorded only)'}`);
    }
  }
  out(`  seed ${emulator.seed}`);
  out(
    color.dim(
      `Try: curl -X POST ${emulator.url}/v1/messages -H 'Authorization: Bearer ${emulator.modes.test.keys[0]}' \\`,
    ),
  );
  out(
    color.dim(
      `       -H 'Content-Type: application/json' -d '{"to":"+15550100001","sender":"Acme","body":"Hi"}'`,
    ),
  );
  out(color.dim('Ctrl-C to stop. Nothing is kept after it.'));
}

function readData(file: string | undefined): EmulatorSeedData {
  if (file === undefined) return {};
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const why = (error as { code?: string }).code === 'ENOENT' ? 'no such file' : 'not valid JSON';
    throw new UsageError(
      `emulate: --data ${file}: ${why}. Give a JSON file with senders, templates and groups.`,
    );
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new UsageError(
      'emulate: --data must hold a JSON object: {"senders": […], "templates": […], "groups": […]}.',
    );
  }
  return data as EmulatorSeedData;
}
