import { WebhookConfigError } from '../base/errors.js';
import { option, rules } from '../base/options.js';
import type { MessageStatus } from '../events/status-order.js';

export interface ServiceClientOptions {
  /** The service's base address, e.g. `https://api.example.com` (the emulator's: `emulator.url`). */
  baseUrl: string;
  /** A test key or a live key: the service tells the modes apart by the key (and its base address). */
  apiKey: string;
  /**
   * Where a message's status is read, `{id}` standing for the message id. The preview API leaves it open.
   * Default `/v1/messages/{id}`.
   */
  statusPath?: string;
  /** Longest wait for one request (milliseconds). Default 10000. */
  timeoutMs?: number;
  /** How many times a 429 is waited out and the request sent again. Default 5. */
  maxRateLimitWaits?: number;
  /** The fetch to use. Default: the global fetch. */
  fetch?: typeof fetch;
}

/** What the service reports of a message. */
export interface ServiceMessageStatus {
  messageId: string;
  status: MessageStatus;
  operator: string | undefined;
  to: string | undefined;
  /** Each status the service reached, with its time. */
  history: { status: MessageStatus; at: string }[];
}

export interface ServiceClient {
  /** The message's status at the service; undefined when the service does not know it (404). */
  messageStatus(messageId: string): Promise<ServiceMessageStatus | undefined>;
  /** Requests sent, 429 answers and what was waited because of them (milliseconds). */
  readonly stats: { requests: number; rateLimited: number; waitedMs: number };
}

/** An answer of the service that is no status: its HTTP status and error code, never the key. */
export class ServiceError extends Error {
  override name = 'ServiceError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

const CLOCK_MARGIN_MS = 5;
const STATUSES = new Set(['queued', 'submitted', 'delivered', 'failed']);
const WHERE = 'createServiceClient(…): ';

/**
 * A small fetch-based client of the service's status path. A 429 is honoured: no request leaves this client
 * before `retry_after_seconds` (or Retry-After) has passed, whichever call asks next.
 */
export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  const { baseUrl, apiKey, statusPath, timeoutMs, maxWaits, fetcher } = resolve(options);
  const stats = { requests: 0, rateLimited: 0, waitedMs: 0 };
  let notBefore = 0;

  const send = async (messageId: string): Promise<Response> => {
    for (let waits = 0; ; waits++) {
      const wait = notBefore - Date.now();
      if (wait > 0) {
        stats.waitedMs += wait;
        await new Promise((resolve) => setTimeout(resolve, wait));
        continue;
      }
      const url = new URL(statusPath.replace('{id}', encodeURIComponent(messageId)), baseUrl);
      stats.requests++;
      const response = await fetcher(url, {
        headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (response.status !== 429) return response;
      stats.rateLimited++;
      const seconds = await retryAfter(response);
      // A timer may fire a millisecond before the clock says it should: a little more, never less.
      notBefore = Math.max(notBefore, Date.now() + seconds * 1000 + CLOCK_MARGIN_MS);
      if (waits >= maxWaits)
        throw new ServiceError(`Rate limited ${waits + 1} times in a row.`, 429, 'rate_limited');
    }
  };

  return {
    stats,
    async messageStatus(messageId) {
      const response = await send(messageId);
      if (response.status === 404) return undefined;
      const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
      if (!response.ok) throw answerError(response.status, body);
      return statusOf(messageId, body ?? {});
    },
  };
}

function resolve(options: ServiceClientOptions) {
  if (typeof options !== 'object' || options === null)
    throw new WebhookConfigError('createServiceClient takes { baseUrl, apiKey }.');
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch {
    throw new WebhookConfigError(`${WHERE}baseUrl must be an absolute URL like https://api.example.com.`);
  }
  if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '')
    throw new WebhookConfigError(`${WHERE}apiKey must be the service's API key (a test or a live key).`);
  const statusPath = option('statusPath', options.statusPath, '/v1/messages/{id}', rules.string, WHERE);
  if (!statusPath.includes('{id}'))
    throw new WebhookConfigError(`${WHERE}statusPath must contain {id}, e.g. /v1/messages/{id}.`);
  return {
    baseUrl: base,
    apiKey: options.apiKey,
    statusPath,
    timeoutMs: option('timeoutMs', options.timeoutMs, 10_000, rules.whole({ min: 1 }), WHERE),
    maxWaits: option('maxRateLimitWaits', options.maxRateLimitWaits, 5, rules.whole({ min: 0 }), WHERE),
    fetcher: options.fetch ?? globalThis.fetch,
  };
}

/** Seconds to wait after a 429: the error's retry_after_seconds, else Retry-After, else 1. */
async function retryAfter(response: Response): Promise<number> {
  const body = (await response.json().catch(() => undefined)) as
    | { error?: { retry_after_seconds?: unknown } }
    | undefined;
  const stated = Number(body?.error?.retry_after_seconds ?? response.headers.get('retry-after'));
  return Number.isFinite(stated) && stated > 0 ? Math.min(stated, 3600) : 1;
}

function answerError(status: number, body: Record<string, unknown> | undefined): ServiceError {
  const error = (body?.error ?? {}) as { code?: unknown };
  const code = typeof error.code === 'string' ? error.code.slice(0, 64) : undefined;
  return new ServiceError(
    `The service answered ${status}${code ? ` ${JSON.stringify(code)}` : ''} to the status request.`,
    status,
    code,
  );
}

function statusOf(messageId: string, body: Record<string, unknown>): ServiceMessageStatus {
  if (typeof body.status !== 'string' || !STATUSES.has(body.status))
    throw new ServiceError('The status answer has no status the tracker knows.', 200, undefined);
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const history = Array.isArray(body.history)
    ? (body.history as { status?: unknown; at?: unknown }[]).flatMap((step) =>
        typeof step?.status === 'string' && STATUSES.has(step.status) && typeof step.at === 'string'
          ? [{ status: step.status as MessageStatus, at: step.at }]
          : [],
      )
    : [];
  return {
    messageId,
    status: body.status as MessageStatus,
    operator: text(body.operator),
    to: text(body.to),
    history,
  };
}
