import { createEvent } from '../events/sample-event.js';
import { type Answer, answerLabel, isAcknowledged, signedDelivery } from '../sending/http.js';
import { deliverWithRetry, type RetryPolicy } from '../sending/retry.js';
import { BIN, type Command, fraction, integer, parseDelivery, SIGNING_HELP, UsageError } from './args.js';
import { formatMs, type Palette, palette, percentile, progressLine } from './output.js';

const BASE_MS = 50;
const CAP_MS = 2000;

const help = `Usage: ${BIN} simulate <url> --secret S --events N [--duplicates R] [--shuffle]
                    [--concurrency C] [--max-attempts A] [--json] [--header NAME]

Sends N events like the service does: a non-2xx answer is retried with exponential backoff and full
jitter (${BASE_MS} ms base, ${CAP_MS / 1000} s cap), each attempt re-signed with a new timestamp. Ends with a
summary; exit code 1 if any delivery was never acknowledged (the service counts it as failed, even when
another delivery of the same event was acknowledged).

  --events N        events to send (1 to 100000)
  --duplicates R    fraction of events delivered twice or more, e.g. 0.3 (default 0)
  --shuffle         deliver in random order (out of order, duplicates apart)
  --concurrency C   deliveries in flight at once (default 8)
  --max-attempts A  attempts per delivery before it counts as failed (default 8)
  --json            print the summary as JSON
${SIGNING_HELP}`;

export interface SimulationSummary {
  events: number;
  deliveries: number;
  attempts: number;
  delivered: number;
  duplicates: number;
  retries: number;
  failures: number;
  unacknowledged: number;
  /** Non-2xx answers by status and error.code (`500 handler_failed`), or `no answer`. */
  rejected: Record<string, number>;
  latencyMs: { p50: number; p99: number };
  elapsedMs: number;
}

export const simulate: Command = {
  name: 'simulate',
  summary: 'send many events with retries, duplicates and shuffling; prints a summary',
  help,
  async run(argv) {
    const { values, url, sign } = parseDelivery('simulate', argv, {
      events: { type: 'string' },
      duplicates: { type: 'string' },
      shuffle: { type: 'boolean' },
      concurrency: { type: 'string' },
      'max-attempts': { type: 'string' },
      json: { type: 'boolean' },
    });
    if (values.events === undefined)
      throw new UsageError('simulate: how many events? Pass --events N, e.g. --events 100.');
    const count = integer('simulate', 'events', values.events, 0, 1, 100_000);
    const duplicates = fraction('simulate', 'duplicates', values.duplicates);
    const concurrency = integer('simulate', 'concurrency', values.concurrency, 8, 1, 1000);
    const maxAttempts = integer('simulate', 'max-attempts', values['max-attempts'], 8, 1, 100);
    const policy: RetryPolicy = { maxAttempts, baseMs: BASE_MS, capMs: CAP_MS, timeoutMs: 10_000 };

    const bodies = Array.from({ length: count }, () => JSON.stringify(createEvent('message.delivered')));
    const plan = planDeliveries(count, duplicates, values.shuffle === true);
    const started = performance.now();
    const { stats, rejected, acknowledged } = await deliverPlan(url, sign, bodies, plan, concurrency, policy);

    const sorted = stats.latencies.sort((a, b) => a - b);
    const summary: SimulationSummary = {
      events: count,
      deliveries: plan.length,
      attempts: stats.attempts,
      delivered: stats.delivered,
      duplicates: stats.duplicates,
      retries: stats.attempts - plan.length,
      failures: stats.failures,
      unacknowledged: count - acknowledged.size,
      rejected,
      latencyMs: { p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)) },
      elapsedMs: Math.round(performance.now() - started),
    };
    process.stdout.write(`${values.json ? JSON.stringify(summary, null, 2) : describe(url, summary)}\n`);
    // A duplicate delivery that fails is a failed delivery for the service, even once its event was acknowledged.
    return summary.failures === 0 ? 0 : 1;
  },
};

/** What the deliveries of a simulation came to. */
interface Tally {
  stats: { attempts: number; delivered: number; duplicates: number; failures: number; latencies: number[] };
  /** Rejected attempts by answer (status and reason). */
  rejected: Record<string, number>;
  /** The events (their index) acknowledged at least once. */
  acknowledged: Set<number>;
}

/** Sends the plan's deliveries, `concurrency` at a time, each retried under `policy`, with a progress line. */
async function deliverPlan(
  url: string,
  sign: Parameters<typeof signedDelivery>[1],
  bodies: readonly string[],
  plan: readonly number[],
  concurrency: number,
  policy: RetryPolicy,
): Promise<Tally> {
  const tally: Tally = {
    stats: { attempts: 0, delivered: 0, duplicates: 0, failures: 0, latencies: [] },
    rejected: {},
    acknowledged: new Set(),
  };
  const { stats, rejected, acknowledged } = tally;
  const progress = progressLine();
  let next = 0;
  let finished = 0;
  const onAttempt = (answer: Answer) => {
    stats.attempts++;
    if (isAcknowledged(answer)) return;
    const label = answerLabel(answer);
    rejected[label] = (rejected[label] ?? 0) + 1;
  };
  const worker = async () => {
    while (next < plan.length) {
      const index = plan[next++] as number;
      const body = bodies[index] as string;
      const { answer, latencies } = await deliverWithRetry(
        url,
        () => signedDelivery(body, sign),
        policy,
        onAttempt,
      );
      stats.latencies.push(...latencies);
      if (isAcknowledged(answer)) {
        stats.delivered++;
        if (answer.duplicate) stats.duplicates++;
        acknowledged.add(index);
      } else {
        stats.failures++;
      }
      finished++;
      progress.update(
        `deliveries ${finished}/${plan.length}  retries ${stats.attempts - finished}  failures ${stats.failures}`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, plan.length) }, worker));
  progress.done();
  return tally;
}

/**
 * One entry per delivery (the event's index). A fraction of the events, chosen at random, is delivered
 * twice, some three or four times; shuffled, duplicates and originals arrive in any order.
 */
export function planDeliveries(count: number, duplicateFraction: number, shuffle: boolean): number[] {
  const repeated = new Set(
    shuffled(Array.from({ length: count }, (_, i) => i)).slice(0, Math.round(count * duplicateFraction)),
  );
  const plan: number[] = [];
  for (let index = 0; index < count; index++) {
    plan.push(index);
    if (!repeated.has(index)) continue;
    plan.push(index);
    for (let extra = 0; extra < 2 && Math.random() < 0.25; extra++) plan.push(index);
  }
  return shuffle ? shuffled(plan) : plan;
}

function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

const round = (ms: number) => Math.round(ms * 10) / 10;

function describe(url: string, s: SimulationSummary): string {
  const color = palette();
  const rejected = Object.entries(s.rejected)
    .map(([label, n]) => `${label} ×${n}`)
    .join(', ');
  const lines = [
    `Simulated ${s.events} events as ${s.deliveries} deliveries to ${url} in ${(s.elapsedMs / 1000).toFixed(1)} s`,
    `  events       ${s.events}`,
    `  deliveries   ${s.deliveries}  (${s.deliveries - s.events} duplicates sent)`,
    `  delivered    ${s.delivered}  (${s.duplicates} answered as duplicate)`,
    `  retries      ${s.retries}${rejected ? `  (non-2xx answers: ${rejected})` : ''}`,
    `  failures     ${s.failures}  (deliveries never acknowledged after their last attempt)`,
    `  latency      p50 ${formatMs(s.latencyMs.p50)}  p99 ${formatMs(s.latencyMs.p99)}`,
  ];
  lines.push(verdict(s, color));
  return lines.join('\n');
}

/** The last line agrees with the exit code: green only when every delivery was acknowledged. */
function verdict(s: SimulationSummary, color: Palette): string {
  if (s.unacknowledged > 0)
    return color.red(`${s.unacknowledged} of ${s.events} events were never acknowledged.`);
  if (s.failures > 0) {
    return color.red(
      `${s.failures} of ${s.deliveries} deliveries were never acknowledged (each event was acknowledged by ` +
        'another of its deliveries; the service counts these as failed deliveries).',
    );
  }
  return color.green(`All ${s.events} events acknowledged.`);
}
