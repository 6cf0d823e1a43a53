import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import { bodySignature, createReceiver, standardWebhooks, verifySignature } from '../../src/index.js';
import { createEvent } from '../../src/testing.js';
import { ensureBuilt } from '../support/build.js';
import { runCli } from '../support/child-processes.js';
import { closeServer, listen } from '../support/http.js';

const WHSEC = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SECRET = 'whsec_cli_profile_5a4b3c2d1e';

beforeAll(ensureBuilt, 180_000);

describe('the CLI signs with --profile', () => {
  it('sign --profile standard-webhooks prints one header per line, and the standardwebhooks package accepts them', async () => {
    const body = JSON.stringify(createEvent('message.delivered'));
    const result = await runCli(
      ['sign', '--profile', 'standard-webhooks', '--id', 'msg_cli_1', '--secret', WHSEC],
      {
        input: body,
      },
    );
    expect(result.code).toBe(0);
    const headers = Object.fromEntries(
      result.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(': ') as [string, string]),
    );
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['webhook-id']).toBe('msg_cli_1');
    expect(new Webhook(WHSEC).verify(body, headers)).toEqual(JSON.parse(body));
    expect(result.stdout).not.toContain(WHSEC);
  });

  it('sign --profile body-signature prints the body to send, signature member included', async () => {
    const body = JSON.stringify(createEvent('message.delivered'));
    const result = await runCli(['sign', '--profile', 'body-signature', '--secret', SECRET], { input: body });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const verified = verifySignature({ payload: result.stdout, secrets: SECRET, profile: bodySignature() });
    expect(verified).toMatchObject({ ok: true });
  });

  it('an unknown profile, or --header with a preset that names its own, is a usage error', async () => {
    const unknown = await runCli(['sign', '--profile', 'stripe', '--secret', SECRET], { input: '{}' });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      "unknown --profile 'stripe'. Use one of: default, standard-webhooks, body-signature",
    );
    const both = await runCli([
      'send',
      'http://127.0.0.1:9/',
      '--profile',
      'standard-webhooks',
      '--header',
      'x',
      '--secret',
      WHSEC,
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--header renames the default profile');
  });

  it('send --profile standard-webhooks delivers an event a receiver with that profile processes', async () => {
    const receiver = createReceiver({ secrets: WHSEC, profile: standardWebhooks });
    const seen: string[] = [];
    receiver.on('message.delivered', (event) => {
      seen.push(event.type);
    });
    const server = createServer(createNodeHandler(receiver));
    const url = await listen(server);
    try {
      const result = await runCli([
        'send',
        `${url}/webhooks`,
        '--profile',
        'standard-webhooks',
        '--secret',
        WHSEC,
      ]);
      expect(result.code).toBe(0);
      expect(seen).toEqual(['message.delivered']);
    } finally {
      await closeServer(server);
    }
  });
});
