import { option, rules } from '../base/options.js';
import type { MessageStatusView, StatusTransition, TrackedMessage } from './record.js';
import type { Observation } from './rules.js';
import type { ServiceClient } from './service-client.js';

/** What a pass needs of the tracker. */
export interface Reconcilable {
  openMessages(expectedBefore: number, limit: number): Promise<TrackedMessage[]>;
  observe(observation: Observation): Promise<StatusTransition[]>;
  status(messageId: string): Promise<MessageStatusView | undefined>;
  readonly now: () => number;
}

export interface ReconcileOptions {
  /** The service client (createServiceClient). */
  client: Pick<ServiceClient, 'messageStatus'>;
  /** Ask only about messages open at least this long (milliseconds). Default 15 minutes. */
  olderThanMs?: number;
  /** Most messages asked about in one pass. Default 1000. */
  limit?: number;
}

/** What one pass did. */
export interface ReconcileSummary {
  /** Messages asked about. */
  checked: number;
  /** Messages whose status moved by what the service said. */
  moved: number;
  /** Messages the service still reports open (queued or submitted). */
  stillOpen: number;
  /** Messages now `unknown`: past `finalAfterMs` and still not final. */
  unknown: number;
  /** Messages the pass could not ask about (the service's error, or a store's): the next pass asks again. */
  failed: number;
}

const WHERE = 'tracker.reconcile(…): ';

/**
 * One pass: asks the service about the expected messages still open after `olderThanMs`, one at a time (the
 * client waits out 429s), and feeds each answer through the tracker's rules and handlers. Several passes at
 * once (processes, schedules) are safe: every transition is decided by the store, so none is run twice.
 */
export async function reconcile(tracker: Reconcilable, options: ReconcileOptions): Promise<ReconcileSummary> {
  const olderThanMs = option(
    'olderThanMs',
    options?.olderThanMs,
    15 * 60_000,
    rules.whole({ min: 0 }),
    WHERE,
  );
  const limit = option('limit', options?.limit, 1000, rules.whole({ min: 1 }), WHERE);
  const client = options.client;
  if (typeof client?.messageStatus !== 'function')
    throw new TypeError(`${WHERE}client must be a service client: createServiceClient({ baseUrl, apiKey }).`);
  const open = await tracker.openMessages(tracker.now() - olderThanMs, limit);
  const summary: ReconcileSummary = { checked: 0, moved: 0, stillOpen: 0, unknown: 0, failed: 0 };
  for (const message of open) {
    summary.checked++;
    try {
      const outcome = await reconcileOne(tracker, client, message.messageId);
      summary[outcome]++;
    } catch {
      summary.failed++;
    }
  }
  return summary;
}

async function reconcileOne(
  tracker: Reconcilable,
  client: Pick<ServiceClient, 'messageStatus'>,
  messageId: string,
): Promise<'moved' | 'stillOpen' | 'unknown'> {
  const reported = await client.messageStatus(messageId);
  let moved = false;
  for (const step of reported?.history ?? []) {
    const transitions = await tracker.observe({
      messageId,
      status: step.status,
      createdAt: step.at,
      operator: reported?.operator,
      to: reported?.to,
      source: 'reconcile',
    });
    moved ||= transitions.length > 0;
  }
  if (reported && !reported.history.some((step) => step.status === reported.status)) {
    const transitions = await tracker.observe({ ...reported, source: 'reconcile' });
    moved ||= transitions.length > 0;
  }
  const status = await tracker.status(messageId);
  if (status?.status === 'unknown') return 'unknown';
  // Final by another pass or a webhook meanwhile counts as moved: it is no longer open.
  return moved || status?.final ? 'moved' : 'stillOpen';
}
