import { describe, expect, it } from 'vitest';
import { createReceiver, MemoryDedupeStore } from '../../src/index.js';
import { createTestLogger } from '../setup/test-logger.js';
import { deliveredEvent, delivery, expectAccepted, SECRET, TEST_SECRET } from '../support/unit.js';

describe("modes: { test: 'ignore' }", () => {
  it('answers a verified test event 200 without a handler or a claim, and logs it as ignored', async () => {
    const store = new MemoryDedupeStore();
    const { logger, lines } = createTestLogger();
    const receiver = createReceiver({
      secrets: { live: SECRET, test: TEST_SECRET },
      modes: { test: 'ignore' },
      store,
      logger,
    });
    const ran: string[] = [];
    receiver.on('message.delivered', (_event, ctx) => {
      ran.push(ctx.mode);
    });
    const event = deliveredEvent();
    const outcome = await receiver.receive(delivery(event, { secret: TEST_SECRET }));
    expect(outcome.status).toBe(200);
    expect(JSON.parse(outcome.body)).toEqual({ received: true, ignored: true });
    expect(outcome).toMatchObject({ ignored: true, mode: 'test', event: { id: event.id } });
    expect(ran).toEqual([]);
    expect(lines.map((line) => [line.fields.outcome, line.fields.mode, line.fields.eventId])).toEqual([
      ['ignored', 'test', event.id],
    ]);
    expect(receiver.metrics().series.map((series) => series.outcome)).toEqual(['ignored']);
    // Not claimed: a receiver that handles test events runs it from the same store.
    const handling = createReceiver({ secrets: { live: SECRET, test: TEST_SECRET }, store });
    handling.on('message.delivered', (_event, ctx) => {
      ran.push(ctx.mode);
    });
    expectAccepted(await handling.receive(delivery(event, { secret: TEST_SECRET })));
    expect(ran).toEqual(['test']);
  });

  it('still runs live events, and still refuses what does not verify', async () => {
    const receiver = createReceiver({
      secrets: { live: SECRET, test: TEST_SECRET },
      modes: { test: 'ignore' },
    });
    let ran = 0;
    receiver.on('message.delivered', () => {
      ran++;
    });
    expectAccepted(await receiver.receive(delivery(deliveredEvent())));
    const forged = await receiver.receive(
      delivery(deliveredEvent(), { secret: 'whsec_not_ours_3c5e7a9b1d2f' }),
    );
    expect(forged.status).toBe(401);
    expect(ran).toBe(1);
  });

  it('refuses a mode it does not know and a setting other than handle or ignore', () => {
    expect(() => createReceiver({ secrets: SECRET, modes: { staging: 'ignore' } as never })).toThrow(
      /modes takes live and test/,
    );
    expect(() => createReceiver({ secrets: SECRET, modes: { test: 'drop' } as never })).toThrow(/modes.test/);
  });
});
