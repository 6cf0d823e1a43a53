import { utf8Text } from '../base/bytes.js';
import { createId } from '../events/ids.js';
import { createEvent } from '../events/sample-event.js';
import { nowSeconds } from '../signature/index.js';
import { type Answer, answerLabel, type Delivery, post, type SignOptions, signedDelivery } from './http.js';

/** Far outside the receiver's default tolerance (300 s) and any sane one. */
export const SKEW_SECONDS = 3600;
export const CHECK_TIMEOUT_MS = 10_000;

interface Check {
  id: string;
  name: string;
  expects: '2xx' | '4xx';
  /** What accepting a forged delivery means, for the 4xx checks. */
  accepted?: string;
  delivery(sign: SignOptions, previous: Delivery | undefined): Delivery;
}

const freshBody = () => JSON.stringify(createEvent('message.delivered'));
const shifted = (sign: SignOptions, seconds: number) => ({ ...sign, timestamp: nowSeconds() + seconds });

const checks: Check[] = [
  { id: 'valid', name: 'valid event', expects: '2xx', delivery: (sign) => signedDelivery(freshBody(), sign) },
  {
    id: 'duplicate',
    name: 'same delivery again',
    expects: '2xx',
    delivery: (sign, previous) => previous ?? signedDelivery(freshBody(), sign),
  },
  {
    id: 'tampered',
    name: 'tampered body',
    expects: '4xx',
    accepted: 'accepted a body changed after signing: verify the signature over the raw bytes',
    delivery(sign) {
      const event = createEvent('message.delivered');
      const signed = signedDelivery(JSON.stringify(event), sign);
      return { ...signed, body: JSON.stringify({ ...event, data: { ...event.data, to: '+15550000000' } }) };
    },
  },
  {
    id: 'stale',
    name: 'stale timestamp',
    expects: '4xx',
    accepted: 'accepted a replayed old delivery: check the signature timestamp (tolerance)',
    delivery: (sign) => signedDelivery(freshBody(), shifted(sign, -SKEW_SECONDS)),
  },
  {
    id: 'future',
    name: 'future timestamp',
    expects: '4xx',
    accepted: 'accepted a timestamp far in the future: check the signature timestamp (tolerance)',
    delivery: (sign) => signedDelivery(freshBody(), shifted(sign, SKEW_SECONDS)),
  },
  {
    id: 'missing-header',
    name: 'missing signature header',
    expects: '4xx',
    accepted: 'accepted an unsigned delivery: verify the signature header',
    delivery: () => ({ body: freshBody(), headers: { 'content-type': 'application/json' } }),
  },
  {
    id: 'wrong-secret',
    name: 'wrong secret',
    expects: '4xx',
    accepted: "accepted another secret's signature: verify with this endpoint's secret only",
    delivery: (sign) => signedDelivery(freshBody(), { ...sign, secret: createId('whsec_') }),
  },
  {
    id: 'content-type',
    name: 'non-JSON content type',
    expects: '4xx',
    accepted: 'accepted a non-JSON content type: webhooks are application/json',
    delivery(sign) {
      const signed = signedDelivery(freshBody(), sign);
      return { ...signed, headers: { ...signed.headers, 'content-type': 'text/plain' } };
    },
  },
];

export interface CheckResult {
  id: string;
  name: string;
  expected: string;
  passed: boolean;
  status: number;
  reason?: string;
  duplicate?: boolean;
  ms: number;
  detail: string;
  /** The id of the event the check sent (its handlers run when the endpoint accepts it). */
  event_id?: string;
}

/** Runs every check against `url` in order (the duplicate check resends the valid check's delivery). */
export async function runChecks(url: string, sign: SignOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  let previous: Delivery | undefined;
  for (const item of checks) {
    const delivery = item.delivery(sign, previous);
    if (item.id === 'valid') previous = delivery;
    const result = judge(item, await post(url, delivery, CHECK_TIMEOUT_MS));
    const eventId = eventIdOf(delivery.body);
    results.push(eventId === undefined ? result : { ...result, event_id: eventId });
  }
  return results;
}

function eventIdOf(body: Delivery['body']): string | undefined {
  try {
    const id = (JSON.parse(utf8Text(body)) as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

function judge(item: Check, answer: Answer): CheckResult {
  const result = (passed: boolean, detail: string): CheckResult => ({
    id: item.id,
    name: item.name,
    expected: item.expects,
    passed,
    status: answer.status,
    ...(answer.reason ? { reason: answer.reason } : {}),
    ...(item.id === 'duplicate' ? { duplicate: answer.duplicate } : {}),
    ms: Math.round(answer.ms * 10) / 10,
    detail,
  });
  const { status } = answer;
  if (status === 0) return result(false, answer.error ?? 'no answer');
  if (status >= 300 && status < 400) {
    return result(
      false,
      `redirected to ${answer.location ?? '(no location)'}: the service does not follow redirects, give the final URL`,
    );
  }
  if (item.expects === '2xx') {
    // Durable acknowledgement: the first delivery is queued for a worker, so its copy is in progress.
    if (item.id === 'duplicate' && status === 409 && answer.reason === 'event_in_progress') {
      return result(true, 'in progress: the first delivery is still queued or running; it runs once');
    }
    if (status < 200 || status >= 300) return result(false, `expected 2xx, got ${answerLabel(answer)}`);
    if (item.id !== 'duplicate') return result(true, 'acknowledged');
    return result(
      true,
      answer.duplicate
        ? 'recognised as a duplicate'
        : 'acknowledged; the answer does not say duplicate, make sure it ran once',
    );
  }
  if (status >= 400 && status < 500) return result(true, 'rejected');
  if (status >= 200 && status < 300) return result(false, item.accepted ?? 'accepted: it must be rejected');
  return result(
    false,
    `expected 4xx, got ${answerLabel(answer)}: reject with a 4xx, a 5xx makes the service retry`,
  );
}
