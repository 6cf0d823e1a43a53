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

/**
 * Counts the calls of `object[method]` whose promise has not settled (publishes not yet confirmed). With
 * `killAtNextSend`, the kill runs inside the call that sends the next publish, once the client has it and
 * before its promise can settle: at least that publish is unconfirmed at the kill, whatever the client had on
 * the wire by then. `atKill` says how many were; `failedAfterKill` how many publishes were refused after it.
 */
export function unconfirmedPublishes<O extends object, K extends keyof O & string>(object: O, method: K) {
  const original = object[method] as unknown as (...args: unknown[]) => Promise<unknown>;
  let unconfirmed = 0;
  let killedAt: number | undefined;
  let failedAfterKill = 0;
  const reasons = new Map<string, number>();
  let armed: { kill: () => unknown; killed: (atKill: number) => void } | undefined;
  (object as Record<string, unknown>)[method] = (...args: unknown[]) => {
    const publishing = original.apply(object, args);
    unconfirmed++;
    void publishing.then(
      () => unconfirmed--,
      (error: unknown) => {
        unconfirmed--;
        if (killedAt === undefined) return;
        failedAfterKill++;
        const reason = String((error as Error)?.message ?? error).slice(0, 160);
        if (reasons.size < 5 || reasons.has(reason)) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      },
    );
    if (armed) {
      const { kill, killed } = armed;
      armed = undefined;
      // Not on a later turn: a quick broker confirms this publish before it, and the kill then finds none.
      const atKill = unconfirmed;
      killedAt = atKill;
      void Promise.resolve(kill()).then(() => killed(atKill));
    }
    return publishing;
  };
  return {
    /** Resolves, once `kill` ran in the call that sent the next publish, to how many were unconfirmed then. */
    killAtNextSend(kill: () => unknown): Promise<number> {
      return new Promise((killed) => {
        armed = { kill, killed };
      });
    },
    get failedAfterKill() {
      return failedAfterKill;
    },
    /** The first few reasons publishes were refused for after the kill, with how often each was given. */
    reasons: () => Object.fromEntries(reasons),
  };
}
