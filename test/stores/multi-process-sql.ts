import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { buildPackage } from '../support/harness/build.js';
import { type ReceiverProcess, startProcess } from '../support/harness/processes.js';
import { type Attempt, deliverAll, eventIds, tally } from '../support/harness/sender.js';

const FIXTURE = fileURLToPath(new URL('../support/fixtures/orm-receiver.mjs', import.meta.url));
const EVENTS = 300;
const COPIES = 4;
const LEASE_MS = 3000;

export interface SqlCluster {
  /** `mysql`, or `<orm>-postgres` / `<orm>-mysql` for knex, kysely, drizzle and prisma: the fixture's store. */
  store: string;
  url: string;
  table: string;
  effectsTable: string;
  run: string;
  /** The generated Prisma client, bundled to JavaScript, for the `prisma-*` stores. */
  prismaClient?: string;
  /** Rows per event id in the effects table. */
  rows(): Promise<Map<string, number>>;
}

/** Copies of every event in an order of their own (a fixed shuffle: a failure replays). */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * The multi-process proof of a transactional SQL store: 3 receiver processes share it, each of 300 events is
 * delivered 4 times in a shuffled order, a tenth of the handler calls fail after writing their row through
 * ctx.tx, and the first process is SIGKILLed inside the transaction of one event. Every event must end
 * acknowledged, with its row exactly once, processed (a non-duplicate 200) at most once.
 */
export async function expectEachRowOnce(cluster: SqlCluster): Promise<Record<string, number>> {
  const dist = await buildPackage();
  const ids = eventIds(cluster.run, EVENTS);
  const secret = `whsec_${cluster.run}`;
  const base = { ...cluster, dist, secret, leaseMs: LEASE_MS, failRate: 0.1 };
  const instances: ReceiverProcess[] = [];
  try {
    for (let seed = 0; seed < 3; seed++) {
      instances.push(await startProcess(FIXTURE, { ...base, seed, hangAfter: seed === 0 ? 40 : undefined }));
    }
    const deliveries = shuffled(
      ids.flatMap((eventId, index) =>
        Array.from({ length: COPIES }, (_, copy) => ({ eventId, index, copy })),
      ),
      EVENTS,
    ).map(({ eventId, index, copy }) => ({
      eventId,
      target: (attempt: number) => (instances[(index + copy + attempt) % 3] as ReceiverProcess).url,
    }));
    const [victim] = instances as [ReceiverProcess];
    const killed = victim
      .waitFor((message) => typeof message.hanging === 'string', 30_000)
      .then(() => {
        victim.child.kill('SIGKILL');
      });
    const attempts: Attempt[] = await deliverAll(deliveries, {
      secret,
      concurrency: 30,
      deadline: Date.now() + 50_000,
    });
    await killed;
    const rows = await cluster.rows();
    expect([...rows.keys()].sort()).toEqual(ids);
    expect([...rows].filter(([, n]) => n !== 1)).toEqual([]);
    const processed = attempts.filter((attempt) => attempt.status === 200 && !attempt.duplicate);
    expect(processed.length).toBeLessThanOrEqual(ids.length);
    expect(new Set(processed.map((attempt) => attempt.eventId)).size).toBe(processed.length);
    const counts = tally(attempts);
    expect(counts['500 handler_failed'], 'handlers failed and were retried').toBeGreaterThan(25);
    expect(counts.network, 'the killed process was met').toBeGreaterThan(0);
    return counts;
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
  }
}
