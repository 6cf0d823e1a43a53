import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler } from '../../../adapters/node.js';
import { createReceiver, type DedupeStore } from '../../../src/index.js';
import { createEvent, createSignedRequest } from '../../../src/testing.js';
import { gate } from '../gate.js';
import { type Attempt, type Delivery, deliverAll, tally } from '../harness/sender.js';

/** A receiver on a real socket, as a server of the fleet: its URL and how to close it. */
export async function serve(
  receiver: Parameters<typeof createNodeHandler>[0],
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(createNodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Each event once, then `copies` of the first ones, spread over `urls` (a retry goes to the next one). */
export function fleetDeliveries(ids: string[], copies: number, urls: string[]): Delivery[] {
  const at = (index: number) => (attempt: number) => urls[(index + attempt) % urls.length] as string;
  const firsts = ids.map((eventId, index) => ({ eventId, target: at(index) }));
  const again = ids.slice(0, copies).map((eventId, index) => ({ eventId, target: at(index + 1) }));
  // The copies come in among the first deliveries, as the service's retries do.
  return firsts.flatMap((delivery, index) =>
    index < again.length ? [delivery, again[index] as Delivery] : [delivery],
  );
}

export interface ThroughKill {
  attempts: Attempt[];
  killedAt: number;
  /** Deliveries answered other than 2xx (each was retried until a 2xx). */
  failed: number;
  /** Seconds from the kill to the end of the last answer other than 2xx: the outage the service saw. */
  recoverySeconds: number;
  tally: Record<string, number>;
}

/**
 * Plays the service through a primary's loss: delivers everything (retrying until a 2xx, within `deadlineMs`),
 * and once `killAt` of the deliveries were acknowledged runs `kill` (the primary SIGKILLed) and goes on.
 */
export async function deliverThroughKill(
  deliveries: Delivery[],
  options: {
    secret: string;
    concurrency: number;
    killAt: number;
    kill: () => Promise<void>;
    deadlineMs: number;
  },
): Promise<ThroughKill> {
  const threshold = Math.floor(deliveries.length * options.killAt);
  let acknowledged = 0;
  const reached = gate();
  const sending = deliverAll(deliveries, {
    secret: options.secret,
    concurrency: options.concurrency,
    deadline: Date.now() + options.deadlineMs,
    onAttempt: (attempt) => {
      if (attempt.status >= 200 && attempt.status < 300 && ++acknowledged === threshold) reached.open();
    },
  });
  await Promise.race([reached.opened, sending]);
  const killedAt = Date.now();
  await options.kill();
  const attempts = await sending;
  const failures = attempts.filter((attempt) => attempt.status < 200 || attempt.status >= 300);
  const lastFailure = Math.max(killedAt, ...failures.map((attempt) => attempt.endedAt));
  return {
    attempts,
    killedAt,
    failed: failures.length,
    recoverySeconds: (lastFailure - killedAt) / 1000,
    tally: tally(attempts),
  };
}

/** The ids acknowledged with a 2xx (processed, duplicate or accepted), each once. */
export function acknowledgedIds(attempts: Attempt[]): Set<string> {
  return new Set(
    attempts
      .filter((attempt) => attempt.status >= 200 && attempt.status < 300)
      .map((attempt) => attempt.eventId),
  );
}

/**
 * The size and settings of a failover run: the suite's (small, the documented safe setting) unless
 * bench/failover.mjs asks for more through the environment: MW_HA_EVENTS, MW_HA_COPIES, MW_HA_CONCURRENCY,
 * MW_HA_REPLICAS (0: no waitForReplicas), MW_HA_SYNC (0: asynchronous standby), MW_HA_DEADLINE_MS.
 */
export function haSettings() {
  const number = (name: string, fallback: number) => {
    const value = process.env[name];
    return value === undefined || value === '' ? fallback : Number(value);
  };
  const replicas = number('MW_HA_REPLICAS', 1);
  const synchronous = number('MW_HA_SYNC', 1) !== 0;
  return {
    events: number('MW_HA_EVENTS', 60),
    copies: number('MW_HA_COPIES', 20),
    concurrency: number('MW_HA_CONCURRENCY', 8),
    replicas,
    synchronous,
    deadlineMs: number('MW_HA_DEADLINE_MS', 75_000),
    /** The documented setting, whose runs must lose nothing. */
    safe: replicas > 0 && synchronous,
  };
}

/**
 * A receiver on `store` that counts the runs of each event and what onError heard, and delivers a signed event
 * by id. A claim whose request failed with the primary keeps its lease: a short one ends the 409s soon after.
 */
export function countingReceiver(store: DedupeStore, secret: string) {
  const runs = new Map<string, number>();
  const errors: string[] = [];
  const receiver = createReceiver({ secrets: secret, store, leaseMs: 3000 });
  receiver.on('message.delivered', (event) => {
    runs.set(event.id as string, (runs.get(event.id as string) ?? 0) + 1);
  });
  receiver.onError((error) => {
    errors.push(error.message);
  });
  const deliver = (id: string) => {
    const { body, headers } = createSignedRequest(createEvent('message.delivered', { id }), { secret });
    return receiver.receive({ method: 'POST', headers, rawBody: body });
  };
  return { receiver, runs, errors, deliver };
}

/** One setting of a cost run: its label, and how one delivery of an event id is answered through it. */
export type CostCase = readonly [label: string, deliver: (id: string) => Promise<{ status: number }>];

/**
 * The rate and answer times of each setting, `total` events 16 at a time each, the settings interleaved in five
 * rounds (a fifth of the events through one, then the next), so a machine busy in one moment weighs on all of
 * them. Each delivery must be answered `status`. Prints and returns one line per setting.
 */
export async function interleavedCost(cases: CostCase[], total: number, run: string, status: number) {
  const measured = cases.map(() => ({ times: [] as number[], seconds: 0, events: 0 }));
  const rounds = 5;
  for (let round = 0; round < rounds; round++) {
    for (const [index, [label, deliver]] of cases.entries()) {
      const ids = Array.from(
        { length: Math.ceil(total / rounds) },
        (_, i) => `evt_${run}c${index}r${round}_${i}`,
      );
      const into = measured[index] as (typeof measured)[number];
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < ids.length) {
            const id = ids[next++] as string;
            const at = performance.now();
            const answered = (await deliver(id)).status;
            if (answered !== status) throw new Error(`${label}: ${id} was answered ${answered}`);
            into.times.push(performance.now() - at);
          }
        }),
      );
      into.seconds += (performance.now() - started) / 1000;
      into.events += ids.length;
    }
  }
  return cases.map(([label], index) => {
    const { times, seconds, events } = measured[index] as (typeof measured)[number];
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]?.toFixed(0);
    const line = `cost, ${label}: ${(events / seconds).toFixed(0)} events/s, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`;
    console.info(line);
    return line;
  });
}
