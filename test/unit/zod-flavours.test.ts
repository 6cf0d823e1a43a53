import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as zm from 'zod/mini';
import { defaultEvents, messageDelivered } from '../../src/index.js';
import { createEventParser } from '../../src/pipeline/3-event.js';
import { ensureBuilt, root } from '../support/build.js';
import { deliveredEvent, uniqueId } from '../support/unit.js';

/*
 * The package's schemas are zod/mini's (a bundle without zod's methods); an app's own schemas may be classic
 * zod or zod/mini, as both are zod 4 schemas: the catalogue treats them alike.
 */
const parse = createEventParser({
  ...defaultEvents,
  'campaign.completed': z.object({ campaign_id: z.string(), sent: z.number().int() }),
  'campaign.paused': zm.object({ campaign_id: zm.string(), reason: zm.optional(zm.string()) }),
});
const event = (type: string, data: unknown) => ({ id: uniqueId('evt_'), type, data });

describe('a catalogue of classic zod and zod/mini schemas', () => {
  it('keeps the fields a schema does not declare, whichever zod built it', () => {
    for (const type of ['campaign.completed', 'campaign.paused']) {
      const data = { campaign_id: 'cmp_1', sent: 3, added_by_the_service: true };
      const parsed = parse(event(type, data));
      expect(parsed).toMatchObject({ ok: true, known: true, event: { data } });
    }
  });

  it('reports the issues of either flavour by path', () => {
    const completed = parse(event('campaign.completed', { campaign_id: 1, sent: 1.5 }));
    const paused = parse(event('campaign.paused', { reason: 7 }));
    expect(completed.ok || completed.issues.map((issue) => issue.path)).toEqual([
      'data.campaign_id',
      'data.sent',
    ]);
    expect(paused.ok || paused.issues.map((issue) => issue.path)).toEqual([
      'data.campaign_id',
      'data.reason',
    ]);
  });

  it("nests the package's schemas in a classic schema and the other way round", () => {
    const wrapped = z.object({ delivery: messageDelivered });
    expect(wrapped.safeParse({ delivery: deliveredEvent().data }).success).toBe(true);
    expect(wrapped.safeParse({ delivery: { message_id: 'nope' } }).success).toBe(false);
  });
});

describe('issue messages', () => {
  it("keep the locale the app chose before the receiver's parser was made", () => {
    z.config(z.locales.de());
    try {
      const parsed = createEventParser(defaultEvents)(event('message.delivered', { message_id: 'msg_1' }));
      expect(parsed.ok).toBe(false);
      const messages = parsed.ok ? [] : parsed.issues.map((issue) => issue.message);
      expect(messages[0]).toMatch(/^Ungültige Eingabe/);
    } finally {
      z.config(z.locales.en());
    }
  });
});

describe('issue messages without classic zod loaded', () => {
  beforeAll(ensureBuilt, 180_000);

  // A process that imports only the package (zod/mini loads no locale): an invalid event's 422 names its
  // issues in English, as zod's own default does.
  it('are English in the 422 answer', () => {
    const script = `
      import { createHmac } from 'node:crypto';
      import { createReceiver } from './dist/src/index.js';
      const receiver = createReceiver({ secrets: 'whsec_flavours' });
      const body = JSON.stringify({ id: 'evt_1', type: 'message.delivered', data: { message_id: 'msg_1', to: 5 } });
      const t = Math.floor(Date.now() / 1000);
      const v1 = createHmac('sha256', 'whsec_flavours').update(t + '.' + body).digest('hex');
      const headers = { 'content-type': 'application/json', 'webhook-signature': 't=' + t + ',v1=' + v1 };
      const outcome = await receiver.receive({ method: 'POST', headers, rawBody: body });
      console.log(JSON.stringify({ status: outcome.status, body: JSON.parse(outcome.body) }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
    });
    const { status, body } = JSON.parse(out);
    expect(status).toBe(422);
    expect(body.error.issues).toEqual([
      { path: 'data.to', code: 'invalid_type', message: 'Invalid input: expected string, received number' },
      {
        path: 'data.operator',
        code: 'invalid_type',
        message: 'Invalid input: expected string, received undefined',
      },
    ]);
  });
});
