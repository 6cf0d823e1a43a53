import type { Receiver } from '../../src/index.js';
import { deliveredEvent, delivery } from '../support/unit.js';
import { until } from '../support/until.js';

/** How long the sending may go on: a run that cannot finish returns what it saw, well within a test's timeout. */
const SENDING_MS = 70_000;

/**
 * Delivers `count` events, 16 at a time, each sent again until it is answered 2xx (as the service does); `lose`
 * runs once a third of them were sent. Resolves once every event answered 2xx ran, or names those that did not;
 * the answers counted by status say where a run that stopped at its deadline was stuck.
 */
export async function deliverThroughLoss(receiver: Receiver, count: number, lose: () => Promise<void>) {
  const ran = new Set<string>();
  receiver.on('message.delivered', (event) => {
    ran.add(event.id as string);
  });
  const events = Array.from({ length: count }, () => deliveredEvent());
  const acknowledged = new Set<string>();
  const answers: Record<number, number> = {};
  let sent = 0;
  let lost: Promise<void> | undefined;
  const stopAt = Date.now() + SENDING_MS;
  const deliver = async () => {
    while (sent < events.length && Date.now() < stopAt) {
      const event = events[sent++] as { id: string };
      if (sent === Math.floor(count / 3)) lost = lose();
      for (let tries = 0; tries < 300 && Date.now() < stopAt; tries++) {
        const outcome = await receiver.receive(delivery(event));
        answers[outcome.status] = (answers[outcome.status] ?? 0) + 1;
        if (outcome.status < 300) {
          acknowledged.add(event.id);
          break;
        }
        // A sender's pause between retries, as the service's own backs off; what is checked is the answers.
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, deliver));
  await lost;
  await until(() => [...acknowledged].every((id) => ran.has(id)), {
    timeoutMs: 60_000,
    what: 'every acknowledged event run',
  }).catch(() => {});
  return { answers, acknowledged, notRun: [...acknowledged].filter((id) => !ran.has(id)) };
}
