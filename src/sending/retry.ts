import { type Answer, type Delivery, isAcknowledged, post } from './http.js';

export interface RetryPolicy {
  maxAttempts: number;
  /** First backoff ceiling; doubles each attempt up to capMs. */
  baseMs: number;
  capMs: number;
  timeoutMs: number;
}

/**
 * The wait after failed attempt number `attempt` (from 1), as the service waits: full jitter, a random wait
 * from 0 to min(cap, base·2^(attempt-1)), so that endpoints coming back are not hit by every retry at once.
 */
export function backoffMs(
  policy: Pick<RetryPolicy, 'baseMs' | 'capMs'>,
  attempt: number,
  random: () => number = Math.random,
): number {
  return random() * Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 1));
}

export interface Attempted {
  /** The last answer: the 2xx, or the failure after the last attempt. */
  answer: Answer;
  attempts: number;
  /** Duration of each attempt. */
  latencies: number[];
}

/** Sends like the service: a non-2xx answer (or none) is retried after a backoff, each attempt re-signed. */
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
    await new Promise((resolve) => setTimeout(resolve, backoffMs(policy, attempt)));
  }
}
