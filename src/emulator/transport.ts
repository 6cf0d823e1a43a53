import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { type Answer, type Delivery, describeBody, describeError } from '../sending/http.js';

/**
 * The emulator's webhook requests: the CLI's `post`, answer for answer (same Answer, same reading of the
 * body and of failures), over node:http with kept-alive sockets instead of fetch, which spends several
 * times the CPU per request and keeps a 10 s timer per request alive: the emulator sends thousands a second.
 */
export class Transport {
  private readonly http: HttpAgent;
  private readonly https: HttpsAgent;

  constructor(maxSockets: number) {
    this.http = new HttpAgent({ keepAlive: true, maxSockets });
    this.https = new HttpsAgent({ keepAlive: true, maxSockets });
  }

  post(url: string, delivery: Delivery, timeoutMs: number): Promise<Answer> {
    const started = performance.now();
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    return new Promise((resolve) => {
      const fail = (error: unknown) =>
        resolve({
          status: 0,
          body: '',
          ms: performance.now() - started,
          duplicate: false,
          error: describeError(error, timeoutMs),
        });
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
          res.on('end', () => {
            const answer: Answer = {
              status: res.statusCode ?? 0,
              body,
              ms: performance.now() - started,
              duplicate: false,
            };
            describeBody(answer);
            if (typeof res.headers.location === 'string') answer.location = res.headers.location;
            resolve(answer);
          });
        },
      );
      req.setTimeout(timeoutMs, () => {
        const timeout = new Error('timed out');
        timeout.name = 'TimeoutError';
        req.destroy(timeout);
      });
      req.on('error', (error) => fail(error.name === 'TimeoutError' ? error : { cause: error }));
      req.end(delivery.body);
    });
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
