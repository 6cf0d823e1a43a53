import { expect } from 'vitest';
import type { Outcome, ReceiveRequest } from '../../src/adapter.js';
import { createReceiver, type DedupeStore } from '../../src/index.js';
import { createEvent } from '../../src/testing.js';
import { gate } from './gate.js';
import { delivery, SECRET } from './unit.js';

/** Resolves after `ms`: paces retries, never decides an outcome (a slower machine only retries later). */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const RETRIES = 6;

/**
 * Retries `event` every half lease until `leaseMs × 3` has passed since `from` and at least six retries were
 * sent (a loaded machine takes longer, never fewer): the service's retries arriving while the first delivery's
 * handler still runs (or its event still waits) in this process.
 */
async function retryForThreeLeases(
  receive: (request: ReceiveRequest) => Promise<Outcome>,
  event: unknown,
  leaseMs: number,
  from: number,
): Promise<Promise<Outcome>[]> {
  // Not awaited one by one: a retry that wrongly claimed the event may wait behind the first delivery.
  const answers: Promise<Outcome>[] = [];
  while (Date.now() - from < leaseMs * 3 || answers.length < RETRIES) {
    await pause(leaseMs / 2);
    answers.push(receive(delivery(event)));
  }
  // Every retry is answered while the first delivery still holds the event: one still claiming when the event
  // completes would be told "duplicate", a race of the test's own. Correct code answers each at once; a retry
  // that wrongly claimed the event and waits behind it is given up on after 10 s, and fails the checks.
  let giveUp: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(answers), new Promise((stop) => (giveUp = setTimeout(stop, 10_000)))]);
  clearTimeout(giveUp);
  return answers;
}

/**
 * A handler three times longer than the lease, retries arriving all along: the lease is renewed while the
 * handler runs, so every retry is told event_in_progress and the handler runs once.
 */
export async function expectSlowHandlerRunsOnce(store: DedupeStore<unknown>, leaseMs: number): Promise<void> {
  const receiver = createReceiver({ secrets: SECRET, store, leaseMs });
  let runs = 0;
  const held = gate();
  const running = gate();
  receiver.on('message.delivered', async () => {
    runs++;
    running.open();
    if (runs === 1) await held.opened;
  });
  const event = createEvent('message.delivered');
  const from = Date.now();
  const first = receiver.receive(delivery(event));
  await running.opened;
  let retrying: Promise<Outcome>[];
  try {
    retrying = await retryForThreeLeases((request) => receiver.receive(request), event, leaseMs, from);
  } finally {
    held.open();
  }
  expect((await first).status).toBe(200);
  const retries = await Promise.all(retrying);
  expect(retries.map((outcome) => outcome.reason)).toEqual(retries.map(() => 'event_in_progress'));
  expect((await receiver.receive(delivery(event))).duplicate).toBe(true);
  expect(runs).toBe(1);
  await receiver.close();
}

/**
 * concurrency 1: event A holds the only slot for three leases while B waits in the queue. B's lease is renewed
 * while it waits, so B's retries are told event_in_progress and B runs once, after A.
 */
export async function expectQueuedEventRunsOnce(store: DedupeStore<unknown>, leaseMs: number): Promise<void> {
  const receiver = createReceiver({ secrets: SECRET, store, leaseMs, concurrency: 1 });
  const runs: string[] = [];
  const held = gate();
  const aRunning = gate();
  const a = createEvent('message.delivered');
  const b = createEvent('message.delivered');
  receiver.on('message.delivered', async (event) => {
    runs.push(event.id === a.id ? 'A' : 'B');
    if (event.id !== a.id) return;
    aRunning.open();
    await held.opened;
  });
  const from = Date.now();
  const first = [receiver.receive(delivery(a))];
  await aRunning.opened;
  first.push(receiver.receive(delivery(b)));
  let retrying: Promise<Outcome>[];
  let ranWhileHeld: string[];
  try {
    retrying = await retryForThreeLeases((request) => receiver.receive(request), b, leaseMs, from);
    ranWhileHeld = [...runs];
  } finally {
    held.open();
  }
  expect(ranWhileHeld).toEqual(['A']);
  expect((await Promise.all(first)).map((outcome) => outcome.status)).toEqual([200, 200]);
  const retries = await Promise.all(retrying);
  expect(retries.map((outcome) => outcome.reason)).toEqual(retries.map(() => 'event_in_progress'));
  expect(runs).toEqual(['A', 'B']);
  await receiver.close();
}
