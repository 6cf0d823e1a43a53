import { describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { createEvent } from '../../src/testing.js';
import { gate } from '../support/gate.js';
import { delivery, expectAccepted, expectRejected, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';

/** Nothing lost, nothing run twice: a timed-out answer leaves the claim to the handlers still running. */
describe('handlerTimeoutMs', () => {
  function slowReceiver() {
    const receiver = createReceiver({
      secrets: SECRET,
      handlerTimeoutMs: 30,
      retryAfterSeconds: 2,
    });
    const errors: string[] = [];
    receiver.onError((error) => {
      errors.push(error.code);
    });
    const idle = () => receiver.metrics().queue.running === 0;
    return { receiver, errors, idle };
  }

  it('handler succeeds after the timeout: 503 handler_timeout, then the retry is a duplicate (run once)', async () => {
    const { receiver, errors, idle } = slowReceiver();
    const held = gate();
    let calls = 0;
    receiver.on('message.delivered', async () => {
      calls++;
      await held.opened;
    });
    const event = createEvent('message.delivered');
    const first = await receiver.receive(delivery(event));
    expectRejected(first, 503, 'handler_timeout', '2');
    expect(first.event).toEqual({ id: event.id, type: 'message.delivered' });
    // The claim stays in flight while the handler runs: a retry now is told to come back, not run again.
    expectRejected(await receiver.receive(delivery(event)), 409, 'event_in_progress', '60');
    held.open();
    await until(idle);
    expectAccepted(await receiver.receive(delivery(event)), 200, true);
    expect(calls).toBe(1);
    expect(errors).toEqual([]);
  });

  it('handler fails after the timeout: the claim is released and onError told; the retry processes it', async () => {
    const { receiver, errors, idle } = slowReceiver();
    const held = gate();
    let calls = 0;
    receiver.on('message.delivered', async () => {
      calls++;
      if (calls === 1) {
        await held.opened;
        throw new Error('gateway timeout');
      }
    });
    const event = createEvent('message.delivered');
    expectRejected(await receiver.receive(delivery(event)), 503, 'handler_timeout', '2');
    held.open();
    await until(idle);
    expect(errors).toEqual(['handler_failed']);
    expectAccepted(await receiver.receive(delivery(event)));
    expect(calls).toBe(2);
    expectAccepted(await receiver.receive(delivery(event)), 200, true);
  });

  it('a handler within the limit answers normally and leaves no timer behind', async () => {
    const receiver = createReceiver({ secrets: SECRET, handlerTimeoutMs: 5_000 });
    receiver.on('message.delivered', () => undefined);
    const started = Date.now();
    expectAccepted(await receiver.receive(delivery(createEvent('message.delivered'))));
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});
