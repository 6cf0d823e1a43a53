import { utf8Text } from '../base/bytes.js';
import { type SignatureProfile, signRequest } from '../signature/index.js';

/** One HTTP request as the service would send it: the exact bytes and the headers. */
export interface Delivery {
  body: string | Uint8Array;
  headers: Record<string, string>;
}

/** What the endpoint answered; `status` 0 when no answer came (connection refused, timeout). */
export interface Answer {
  status: number;
  body: string;
  ms: number;
  /** `error.code` of an error body (this library's and the service's shape). */
  reason?: string;
  /** The body said `"duplicate": true`. */
  duplicate: boolean;
  /** Where a 3xx pointed: the service does not follow redirects, so they count as failures. */
  location?: string;
  /** Why no answer came. */
  error?: string;
}

export const isAcknowledged = (answer: Answer) => answer.status >= 200 && answer.status < 300;

/** An answer as summaries show it: the status and the receiver's error.code, `500 handler_failed`. */
export const answerLabel = (answer: Pick<Answer, 'status' | 'reason'>) =>
  answer.status === 0 ? 'no answer' : `${answer.status}${answer.reason ? ` ${answer.reason}` : ''}`;

export interface SignOptions {
  secret: string;
  /** The endpoint's signature format. */
  profile: SignatureProfile;
  /** Unix seconds; default now. */
  timestamp?: number;
}

/** Signs `body` as the profile says and returns the delivery; every retry calls it again for a fresh timestamp. */
export function signedDelivery(body: string, options: SignOptions): Delivery {
  const signed = signRequest({ payload: body, ...options });
  return { body: utf8Text(signed.body), headers: { 'content-type': 'application/json', ...signed.headers } };
}

/** POSTs one delivery without following redirects; never rejects. */
export async function post(url: string, delivery: Delivery, timeoutMs = 10_000): Promise<Answer> {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: delivery.headers,
      // A Buffer is a valid body; the DOM types only want views over a plain ArrayBuffer.
      body: delivery.body as BodyInit,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await response.text();
    const answer: Answer = {
      status: response.status,
      body,
      ms: performance.now() - started,
      duplicate: false,
    };
    describeBody(answer);
    const location = response.headers.get('location');
    if (location !== null) answer.location = location;
    return answer;
  } catch (error) {
    return {
      status: 0,
      body: '',
      ms: performance.now() - started,
      duplicate: false,
      error: describeError(error, timeoutMs),
    };
  }
}

/** Reads `duplicate` and `error.code` of a JSON answer into `answer`. */
export function describeBody(answer: Answer): void {
  let json: unknown;
  try {
    json = JSON.parse(answer.body);
  } catch {
    return;
  }
  if (typeof json !== 'object' || json === null) return;
  const { duplicate, error } = json as { duplicate?: unknown; error?: { code?: unknown } };
  answer.duplicate = duplicate === true;
  if (typeof error?.code === 'string') answer.reason = error.code;
}

export function describeError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused: is the server running on that port?';
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

export interface RetryPolicy {
  maxAttempts: number;
  /** First backoff ceiling; doubles each attempt up to capMs. */
  baseMs: number;
  capMs: number;
  timeoutMs: number;
}

export interface Attempted {
  /** The last answer: the 2xx, or the failure after the last attempt. */
  answer: Answer;
  attempts: number;
  /** Duration of each attempt. */
  latencies: number[];
}

/**
 * Sends like the service: a non-2xx answer (or none) is retried after a backoff with full jitter
 * (a random wait from 0 to min(cap, base·2^n)), each attempt re-signed with a new timestamp.
 */
export async function deliverWithRetry(
  url: string,
  sign: () => Delivery,
  policy: RetryPolicy,
  onAttempt?: (answer: Answer) => void,
): Promise<Attempted> {
  const latencies: number[] = [];
  for (let attempt = 1; ; attempt++) {
    const answer = await post(url, sign(), policy.timeoutMs);
    latencies.push(answer.ms);
    onAttempt?.(answer);
    if (isAcknowledged(answer) || attempt >= policy.maxAttempts)
      return { answer, attempts: attempt, latencies };
    const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 1));
    await new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
  }
}
