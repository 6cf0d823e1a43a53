import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planDeliveries, type SimulationSummary } from '../../src/cli/simulate.js';
import { ensureBuilt } from '../support/build.js';
import {
  type CountingReceiver,
  runCli,
  SECRET,
  startCountingReceiver,
  startServer,
} from '../support/child-processes.js';

beforeAll(ensureBuilt, 180_000);

describe('simulate', () => {
  let receiver: CountingReceiver;
  beforeAll(async () => {
    // Injected failures: an eighth of the events fail their first handler run, a thirty-second also the
    // second. Each failure releases the claim; only the simulator's retries get those events processed.
    receiver = await startCountingReceiver({
      yieldsOnce: true,
      fail: (id, call) => (/[ABCD]$/.test(id) && call === 1) || (/E$/.test(id) && call <= 2),
    });
  });
  afterAll(() => receiver.close());

  it('200 events, 30% duplicates, shuffled: every event processed exactly once', async () => {
    const result = await runCli(
      ['simulate', receiver.url, '--secret', SECRET, '--events', '200', '--duplicates', '0.3', '--shuffle'],
      { timeoutMs: 45_000, env: {} },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('All 200 events acknowledged.');
    expect(result.stdout).toMatch(/latency\s+p50 [\d.]+ ms\s+p99 [\d.]+ ms/);

    expect(receiver.runs.size).toBe(200);
    expect([...receiver.runs.values()].every((runs) => runs === 1)).toBe(true);
    // The injected failures happened and were retried.
    expect([...receiver.calls.values()].some((calls) => calls > 1)).toBe(true);
    const retried = result.stdout.match(/retries\s+(\d+)/);
    expect(Number(retried?.[1])).toBeGreaterThan(0);
    expect(result.stdout).toMatch(/non-2xx answers: .*500 handler_failed ×\d+/);
    // 60 events delivered at least twice.
    expect(Number(result.stdout.match(/deliveries\s+(\d+)/)?.[1])).toBeGreaterThanOrEqual(260);
  }, 60_000);

  it('--json: a machine-readable summary; duplicates answered as such', async () => {
    const result = await runCli(
      [
        'simulate',
        receiver.url,
        '--secret',
        SECRET,
        '--events',
        '40',
        '--duplicates',
        '0.5',
        '--concurrency',
        '4',
        '--json',
      ],
      { timeoutMs: 30_000 },
    );
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as SimulationSummary;
    expect(summary).toMatchObject({ events: 40, unacknowledged: 0, failures: 0 });
    expect(summary.deliveries).toBeGreaterThanOrEqual(60);
    expect(summary.delivered).toBe(summary.deliveries);
    expect(summary.duplicates).toBeGreaterThan(0);
    expect(summary.retries).toBe(summary.attempts - summary.deliveries);
    expect(summary.latencyMs.p99).toBeGreaterThanOrEqual(summary.latencyMs.p50);
  }, 40_000);

  it('exits 1 and counts the events never acknowledged when the endpoint keeps failing', async () => {
    const failing = await startServer((req, res) => {
      req.resume();
      res.writeHead(503).end();
    });
    try {
      const result = await runCli(
        ['simulate', failing.url, '--secret', SECRET, '--events', '3', '--max-attempts', '3', '--json'],
        { timeoutMs: 20_000 },
      );
      expect(result.code).toBe(1);
      const summary = JSON.parse(result.stdout) as SimulationSummary;
      expect(summary).toMatchObject({ events: 3, deliveries: 3, attempts: 9, retries: 6, failures: 3 });
      expect(summary.unacknowledged).toBe(3);
      expect(summary.rejected).toEqual({ '503': 9 });
    } finally {
      await failing.close();
    }
  });

  it('a duplicate delivery never acknowledged fails the run, even when another delivery acknowledged its event', async () => {
    // The first delivery of each event is acknowledged, every later one refused: each event is acknowledged
    // once, yet the service would count its second delivery as failed.
    const seen = new Set<string>();
    const firstOnly = await startServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const { id } = JSON.parse(body) as { id: string };
        const first = !seen.has(id);
        seen.add(id);
        res.writeHead(first ? 200 : 503, { 'content-type': 'application/json' });
        res.end(first ? '{"received":true}' : '{"error":{"code":"store_unavailable"}}');
      });
    });
    const args = ['simulate', firstOnly.url, '--secret', SECRET, '--events', '3', '--duplicates', '1'];
    const options = ['--max-attempts', '1', '--concurrency', '1'];
    try {
      const text = await runCli([...args, ...options], { timeoutMs: 20_000, env: {} });
      expect(text.code).toBe(1);
      expect(text.stdout).not.toContain('All 3 events acknowledged.');
      expect(text.stdout).toMatch(/\d+ of \d+ deliveries were never acknowledged/);
      seen.clear();
      const json = await runCli([...args, ...options, '--json'], { timeoutMs: 20_000 });
      expect(json.code).toBe(1);
      const summary = JSON.parse(json.stdout) as SimulationSummary;
      expect(summary).toMatchObject({ events: 3, unacknowledged: 0 });
      expect(summary.failures).toBe(summary.deliveries - 3);
      expect(summary.failures).toBeGreaterThanOrEqual(3);
    } finally {
      await firstOnly.close();
    }
  });
});

describe('planDeliveries', () => {
  it('delivers every event, the given fraction at least twice, others once', () => {
    const plan = planDeliveries(100, 0.3, false);
    const counts = new Map<number, number>();
    for (const index of plan) counts.set(index, (counts.get(index) ?? 0) + 1);
    expect(counts.size).toBe(100);
    expect([...counts.values()].filter((n) => n >= 2)).toHaveLength(30);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(4);
    // In order without --shuffle; shuffled it is a permutation of the same deliveries.
    expect(plan).toEqual([...plan].sort((a, b) => a - b));
    const shuffled = planDeliveries(1000, 0, true);
    expect([...shuffled].sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(shuffled).not.toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });
});
