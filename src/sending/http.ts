import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
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

/**
 * Sends deliveries as the service does: a POST that never follows a redirect, over node:http with kept-alive
 * sockets rather than fetch, which spends more CPU per request: the emulator sends thousands a second. Idle sockets do not keep the process alive.
 */
export class Transport {
  private readonly http: HttpAgent;
  private readonly https: HttpsAgent;

  constructor(maxSockets = Number.POSITIVE_INFINITY) {
    this.http = new HttpAgent({ keepAlive: true, maxSockets });
    this.https = new HttpsAgent({ keepAlive: true, maxSockets });
  }

  /** POSTs one delivery; never rejects: no answer within `timeoutMs` (or none at all) is status 0. */
  post(url: string, delivery: Delivery, timeoutMs = 10_000): Promise<Answer> {
    const started = performance.now();
    return new Promise((resolve) => {
      const fail = (error: unknown) =>
        resolve({
          status: 0,
          body: '',
          ms: performance.now() - started,
          duplicate: false,
          error: describeError(error, timeoutMs),
        });
      const answered = (res: IncomingMessage, body: string) => {
        const answer: Answer = {
          status: res.statusCode ?? 0,
          body,
          ms: performance.now() - started,
          duplicate: false,
        };
        describeBody(answer);
        if (typeof res.headers.location === 'string') answer.location = res.headers.location;
        resolve(answer);
      };
      try {
        this.request(new URL(url), delivery, timeoutMs, answered, fail);
      } catch (error) {
        fail(error);
      }
    });
  }

  private request(
    target: URL,
    delivery: Delivery,
    timeoutMs: number,
    answered: (res: IncomingMessage, body: string) => void,
    fail: (error: unknown) => void,
  ): void {
    const secure = target.protocol === 'https:';
    const req = (secure ? httpsRequest : httpRequest)(
      target,
      { method: 'POST', headers: delivery.headers, agent: secure ? this.https : this.http },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('error', (error) => fail({ cause: error }));
        res.on('end', () => answered(res, body));
      },
    );
    req.setTimeout(timeoutMs, () => {
      const timeout = new Error('timed out');
      timeout.name = 'TimeoutError';
      req.destroy(timeout);
    });
    req.on('error', (error) => fail(error.name === 'TimeoutError' ? error : { cause: error }));
    req.end(delivery.body);
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

let shared: Transport | undefined;

/** POSTs one delivery over one process-wide Transport; never rejects. */
export function post(url: string, delivery: Delivery, timeoutMs = 10_000): Promise<Answer> {
  shared ??= new Transport();
  return shared.post(url, delivery, timeoutMs);
}

/** Reads `duplicate` and `error.code` of a JSON answer into `answer`. */
function describeBody(answer: Answer): void {
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

function describeError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === 'TimeoutError')
    return `no answer within ${timeoutMs / 1000} s`;
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused: is the server running on that port?';
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
