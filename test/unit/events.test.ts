import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createReceiver, defaultEvents } from '../../src/index.js';
import { createEventParser } from '../../src/pipeline/3-event.js';
import { signPayload } from '../../src/signature/index.js';
import {
  deliveredEvent,
  delivery,
  expectAccepted,
  expectRejected,
  SECRET,
  uniqueId,
} from '../support/unit.js';

const parse = createEventParser(defaultEvents);
const pathsOf = (value: unknown) => {
  const result = parse(value);
  return result.ok ? [] : result.issues.map((issue) => issue.path);
};

describe('the envelope', () => {
  it('accepts a complete message.delivered event', () => {
    const event = deliveredEvent();
    expect(parse(event)).toEqual({ ok: true, event, known: true });
  });

  it('id, created_at and signature may be absent (open in the preview API)', () => {
    const { id: _id, created_at: _created, ...bare } = deliveredEvent();
    expect(parse(bare).ok).toBe(true);
  });

  it('id must start with evt_', () => {
    expect(pathsOf(deliveredEvent({}, { id: 'msg_01JD8Z6Q2W3E4R5T6Y7U8I9O0P' }))).toEqual(['id']);
    expect(pathsOf(deliveredEvent({}, { id: 42 }))).toEqual(['id']);
  });

  it('created_at is ISO 8601 with a UTC offset', () => {
    for (const created_at of [
      '2026-11-21T10:00:00Z',
      '2026-11-21T10:00:00+00:00',
      '2026-11-21T12:00:00.123+02:00',
    ]) {
      expect(pathsOf(deliveredEvent({}, { created_at }))).toEqual([]);
    }
    for (const created_at of ['2026-11-21T10:00:00', '2026-11-21', 'yesterday', 1795000000]) {
      expect(pathsOf(deliveredEvent({}, { created_at }))).toEqual(['created_at']);
    }
  });

  it("signature, when present, is a string; its syntax is the signature profile's to check", () => {
    const signature = signPayload({ payload: 'x', secret: SECRET, timestamp: 1_795_000_000 });
    expect(pathsOf(deliveredEvent({}, { signature }))).toEqual([]);
    // A body-signature profile with the plain syntax carries the bare digest in the field.
    expect(pathsOf(deliveredEvent({}, { signature: 'q1w2e3r4t5y6' }))).toEqual([]);
    for (const bad of [17, null, ['t=1']]) {
      expect(pathsOf(deliveredEvent({}, { signature: bad }))).toEqual(['signature']);
    }
  });

  it('type and data are required; the body must be an object', () => {
    expect(pathsOf({ id: uniqueId('evt_'), data: {} })).toEqual(['type']);
    expect(pathsOf({ type: 'message.delivered' })).toEqual(['data']);
    for (const body of [null, [], 'text', 3]) expect(pathsOf(body)).toEqual(['']);
  });
});

describe('message.delivered and message.failed', () => {
  it('message.delivered: message_id msg_…, to +digits, operator non-empty', () => {
    expect(pathsOf(deliveredEvent({ message_id: 'evt_x' }))).toEqual(['data.message_id']);
    expect(pathsOf(deliveredEvent({ to: '15551234567' }))).toEqual(['data.to']);
    expect(pathsOf(deliveredEvent({ to: '+1555 123' }))).toEqual(['data.to']);
    expect(pathsOf(deliveredEvent({ operator: '' }))).toEqual(['data.operator']);
    expect(pathsOf(deliveredEvent({ operator: undefined }))).toEqual(['data.operator']);
  });

  it('message.failed is provisional and loose: any fields, message_id checked only when present', () => {
    const failed = (data: unknown) => ({ id: uniqueId('evt_'), type: 'message.failed', data });
    expect(parse(failed({})).ok).toBe(true);
    expect(parse(failed({ reason: 'unreachable', code: 4, to: '+1555' })).ok).toBe(true);
    expect(pathsOf(failed({ message_id: 'nope' }))).toEqual(['data.message_id']);
  });

  it('unknown extra fields are kept at runtime, in the envelope and in data (also nested)', () => {
    const event = deliveredEvent(
      { segments: 2, carrier: { mcc: '262', mnc: '02', extra: [1, { deep: true }] } },
      { api_version: '2026-11-01', livemode: false },
    );
    const result = parse(event);
    expect(result.ok).toBe(true);
    expect(result.ok && result.event).toEqual(event);
  });
});

describe('event types beyond the catalogue', () => {
  it('an unknown type is acknowledged 200, goes to onAny only, with its data unchecked', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const any: unknown[] = [];
    const typed: unknown[] = [];
    receiver.onAny((event) => {
      any.push(event);
    });
    receiver.on('message.delivered', (event) => {
      typed.push(event);
    });
    const event = { id: uniqueId('evt_'), type: 'campaign.completed', data: { whatever: [1, 2], n: null } };
    const outcome = await receiver.receive(delivery(event));
    expectAccepted(outcome, 200);
    expect(outcome.event).toEqual({ id: event.id, type: 'campaign.completed' });
    expect(any).toEqual([event]);
    expect(typed).toEqual([]);
    expect(parse(event)).toEqual({ ok: true, event, known: false });
  });

  it('an unknown type still has its envelope checked', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const outcome = await receiver.receive(delivery({ id: 'bad', type: 'campaign.completed', data: {} }));
    expectRejected(outcome, 422, 'invalid_event');
  });

  it("a user's own schema types and checks its events; extra fields are kept", async () => {
    const campaignCompleted = z.object({
      campaign_id: z.string().startsWith('cmp_'),
      sent: z.number().int(),
    });
    const receiver = createReceiver({
      secrets: SECRET,
      events: { ...defaultEvents, 'campaign.completed': campaignCompleted },
    });
    const seen: unknown[] = [];
    receiver.on('campaign.completed', (event) => {
      seen.push(event.data);
    });
    const good = {
      id: uniqueId('evt_'),
      type: 'campaign.completed',
      data: { campaign_id: 'cmp_1', sent: 3, x: 1 },
    };
    expectAccepted(await receiver.receive(delivery(good)), 200);
    expect(seen).toEqual([{ campaign_id: 'cmp_1', sent: 3, x: 1 }]);
    const bad = {
      id: uniqueId('evt_'),
      type: 'campaign.completed',
      data: { campaign_id: 'cmp_2', sent: 'many' },
    };
    const error = expectRejected(await receiver.receive(delivery(bad)), 422, 'invalid_event');
    expect(error.message).toContain('data.sent');
    expect(error.message).not.toContain('many');
  });
});

describe('a type parsed field by field, then compiled', () => {
  it('answers the same before and after zod compiles its schema', () => {
    const fresh = createEventParser(defaultEvents);
    const good = deliveredEvent({ carrier: { mcc: '262' } }, { api_version: '2026-11-01' });
    const bad = { ...deliveredEvent(), id: 'nope', data: { message_id: 'x', to: '123', operator: '' } };
    const unknown = { type: 'campaign.completed', data: { anything: [1] } };
    const rounds = Array.from({ length: 200 }, () => [fresh(good), fresh(bad), fresh(unknown)]);
    for (const round of rounds) expect(round).toEqual(rounds[0]);
    expect(rounds[0]?.[0]).toEqual({ ok: true, event: good, known: true });
    expect(rounds[0]?.[1]?.ok === false && rounds[0][1].issues.map((issue) => issue.path)).toEqual([
      'id',
      'data.message_id',
      'data.to',
      'data.operator',
    ]);
    expect(rounds[0]?.[2]).toEqual({ ok: true, event: unknown, known: false });
  });
});
