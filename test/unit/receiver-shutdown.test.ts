import { describe, expect, it } from 'vitest';
import { createReceiver, MemoryDedupeStore } from '../../src/index.js';
import { createEvent } from '../../src/testing.js';
import { gate } from '../support/gate.js';
import { delivery, expectAccepted, expectRejected, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';

describe('close({ timeoutMs })', () => {
  it('new requests get 503 shutting_down; in-flight handlers finish and their requests get 200', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const held = gate();
    let finished = 0;
    receiver.on('message.delivered', async () => {
      await held.opened;
      finished++;
    });
    const inFlight = receiver.receive(delivery(createEvent('message.delivered')));
    await until(() => receiver.metrics().queue.running === 1);
    const order: string[] = [];
    const closed = receiver.close({ timeoutMs: 5_000 });
    const closedNoted = closed.then(() => order.push('closed'));
    expectRejected(
      await receiver.receive(delivery(createEvent('message.delivered'))),
      503,
      'shutting_down',
      '5',
    );
    // A close() that did not wait would have resolved by now: the rejection above took the whole pipeline.
    order.push('rejected new request');
    held.open();
    expectAccepted(await inFlight);
    order.push('in-flight answered');
    await closedNoted;
    expect(order).toEqual(['rejected new request', 'in-flight answered', 'closed']);
    expect(finished).toBe(1);
    expect(receiver.close()).toBe(closed);
  });

  it('past the timeout: running and queued events are released and answered 503; close() resolves', async () => {
    const store = new MemoryDedupeStore();
    const receiver = createReceiver({ secrets: SECRET, store, concurrency: 1 });
    const errors: string[] = [];
    receiver.onError((error) => {
      errors.push(error.message);
    });
    const held = gate();
    const ended = gate();
    const ran: string[] = [];
    receiver.on('message.delivered', async (event) => {
      ran.push(event.id as string);
      await held.opened;
      ended.open();
    });
    const running = createEvent('message.delivered');
    const queued = createEvent('message.delivered');
    const answers = [receiver.receive(delivery(running)), receiver.receive(delivery(queued))];
    await until(() => receiver.metrics().queue.running === 1 && receiver.metrics().queue.waiting === 1);

    await receiver.close({ timeoutMs: 30 });
    for (const outcome of await Promise.all(answers)) expectRejected(outcome, 503, 'shutting_down', '5');

    // The next instance (same store: think Redis) processes both retries at once, no 409 for a lease.
    const next = createReceiver({ secrets: SECRET, store });
    const processed: string[] = [];
    next.on('message.delivered', (event) => {
      processed.push(event.id as string);
    });
    expectAccepted(await next.receive(delivery(running)));
    expectAccepted(await next.receive(delivery(queued)));
    expect(processed).toEqual([running.id, queued.id]);

    // The cut-off handler ending late settles nothing, and the queued one never starts here.
    held.open();
    await ended.opened;
    await new Promise((resolve) => setImmediate(resolve)); // what would follow the handler's end has run
    expect(ran).toEqual([running.id]);
    expect(errors).toEqual([]); // it did not even try to complete a claim it no longer holds
    expectAccepted(await next.receive(delivery(running)), 200, true);
  });

  it('waits for work acknowledged with 202 before resolving', async () => {
    const receiver = createReceiver({ secrets: SECRET, ack: 'async' });
    const held = gate();
    let finished = 0;
    receiver.on('message.delivered', async () => {
      await held.opened;
      finished++;
    });
    expectAccepted(await receiver.receive(delivery(createEvent('message.delivered'))), 202);
    let closed = false;
    const closing = receiver.close({ timeoutMs: 5_000 }).then(() => {
      closed = true;
    });
    // A request answered shutting_down: close() has begun, and has not resolved while the handler is held.
    expectRejected(
      await receiver.receive(delivery(createEvent('message.delivered'))),
      503,
      'shutting_down',
      '5',
    );
    expect(closed).toBe(false);
    held.open();
    await closing;
    expect(finished).toBe(1);
  });

  it('does not wait for a body still uploading: that request is answered shutting_down, unprocessed', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    let handled = 0;
    receiver.on('message.delivered', () => {
      handled++;
    });
    const body = gate();
    const request = delivery(createEvent('message.delivered'));
    const reading = receiver.receive({
      method: 'POST',
      headers: request.headers,
      readBody: async () => {
        await body.opened;
        return request.rawBody as string;
      },
    });
    await receiver.close({ timeoutMs: 5_000 });
    body.open();
    expectRejected(await reading, 503, 'shutting_down', '5');
    expect(handled).toBe(0);
  });

  it('resolves at once when nothing is running', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    await receiver.close({ timeoutMs: 10_000 });
    expectRejected(
      await receiver.receive(delivery(createEvent('message.delivered'))),
      503,
      'shutting_down',
      '5',
    );
  });
});
