import { expect } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { until } from '../support/until.js';
import { call, changesOf, settled } from './helpers.js';

const MESSAGES = 300;
const CONTACTS = 50;

export interface Drive {
  emulator: Emulator;
  /** Event ids of every delivered and every failed message: each must reach a handler exactly once. */
  eventIds: string[];
  failed: number;
}

/**
 * The proof's workload: 300 messages through POST /v1/messages and a 50-contact campaign, 20% of messages
 * failing, copies sent at once, events held up to 40 ms so they arrive out of order, and a few stale first
 * attempts. Resolves when every message is past its last step and every delivery acknowledged or given up.
 */
export async function drive(endpoint: string, secret: string): Promise<Drive> {
  const contacts = Array.from({ length: CONTACTS }, (_, i) => ({
    phone: `+1555020${String(i).padStart(4, '0')}`,
  }));
  const emulator = await startEmulator({
    test: { endpoint, secret, rateLimit: { requests: 10_000, windowSeconds: 1 } },
    groups: [{ id: 'grp_e2e', contacts }],
    schedule: { submitMs: 5, resultMs: 20, jitterMs: 30, failureRate: 0.2 },
    retry: { maxAttempts: 12, baseMs: 10, capMs: 200 },
    chaos: { copies: 0.3, reorderMs: 40, stale: 0.05 },
    seed: 2026,
  });
  const sends = Array.from({ length: MESSAGES }, (_, i) => ({
    to: `+1555030${String(i).padStart(4, '0')}`,
    sender: 'Acme',
    body: `Message ${i}`,
  }));
  for (let i = 0; i < sends.length; i += 25) {
    const answers = await Promise.all(
      sends.slice(i, i + 25).map((body) => call(emulator, '/v1/messages', { body })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 202));
  }
  const campaign = await call(emulator, '/v1/campaigns', {
    body: { name: 'Proof', sender: 'Acme', template_id: 'tmpl_welcome', group_id: 'grp_e2e' },
  });
  expect(campaign.body.recipients).toBe(CONTACTS);
  await until(() => settled(emulator), { timeoutMs: 45_000, changes: changesOf(emulator) });
  const messages = [...emulator.state.messages.values()];
  expect(messages).toHaveLength(MESSAGES + CONTACTS);
  return {
    emulator,
    eventIds: messages.flatMap((message) => message.events),
    failed: messages.filter((message) => message.status === 'failed').length,
  };
}

/** What the emulator's own record says about the run: retries, copies, reasons of rejected attempts. */
export function expectRecordShowsRetries({ emulator, eventIds, failed }: Drive): Record<string, number> {
  const deliveries = [...emulator.state.deliveries.values()];
  expect(deliveries.filter((delivery) => delivery.state !== 'acknowledged')).toEqual([]);
  expect(eventIds).toHaveLength(MESSAGES + CONTACTS);
  expect(failed / eventIds.length).toBeGreaterThan(0.12);
  expect(failed / eventIds.length).toBeLessThan(0.28);
  const reasons: Record<string, number> = {};
  for (const attempt of deliveries.flatMap((delivery) => delivery.attempts)) {
    const label = `${attempt.status}${attempt.reason ? ` ${attempt.reason}` : ''}${attempt.duplicate ? ' duplicate' : ''}`;
    reasons[label] = (reasons[label] ?? 0) + 1;
  }
  expect(deliveries.filter((delivery) => delivery.kind === 'copy').length).toBeGreaterThan(50);
  expect(
    deliveries.filter((delivery) => delivery.attempts.length > 1).length,
    JSON.stringify(reasons),
  ).toBeGreaterThan(5);
  expect(reasons['401 stale_timestamp']).toBeGreaterThan(5);
  expect(reasons['200 duplicate']).toBeGreaterThan(0);
  return reasons;
}
