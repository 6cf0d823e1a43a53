import { configError } from '../base/errors.js';
import type { Outcome } from '../contract/outcome.js';
import { type ReceiveRequest, serving } from '../contract/request.js';
import { type AdapterReceiver, type ReceiverSource, receiverAtFirstRequest } from './source.js';

/**
 * What an adapter tells the kit about its platform: how to read a request and how to write the outcome. `Args`
 * are what the platform calls the adapter with (`(req, res)`, `(event, context)`, `(request)`), `Result` what it
 * expects back (nothing, a result object, a Response).
 */
export interface AdapterSpec<Args extends unknown[], Result> {
  /** The adapter's name in errors, as users import it: `messaging-webhooks/express`. */
  name: string;
  /** How the adapter is mounted, ending every error about its receiver: `app.post('/webhooks', …)`. */
  usage: string;
  /**
   * The platform's request as the receiver reads it: method, headers, url, route parameters, and the body as
   * bytes in hand (`rawBody`) or a reader of its stream (`readBody`). See nodeRequest and webRequest.
   */
  read(...args: Args): ReceiveRequest | PromiseLike<ReceiveRequest>;
  /** Writes the outcome as the platform answers: status, headers and body exactly as given. */
  write(outcome: Outcome, ...args: Args): Result;
  /** Why this platform cannot serve a receiver (its options need what the platform lacks), or undefined. */
  refuse?(receiver: AdapterReceiver): string | undefined;
}

/**
 * The adapter: a function the platform calls per request. The receiver (or a function that creates it at the
 * first request) is checked once, here, with one error text for every adapter; a factory's receiver is checked
 * when it is made, and a failure is answered 500 receiver_misconfigured.
 */
export function createAdapter<Args extends unknown[], Result>(
  source: ReceiverSource,
  spec: AdapterSpec<Args, Result>,
): (...args: Args) => Promise<Result> {
  const receiver =
    typeof source === 'function'
      ? receiverAtFirstRequest(() => mountedReceiver(source(), spec, { got: 'the factory returned' }))
      : mountedReceiver(source, spec);
  return serving(receiver, spec.read, spec.write);
}

/**
 * Checks that `value` is a receiver this adapter can serve, and returns it. `holds`: the adapter holds the
 * receiver itself (a plugin that closes it with the app, a module that registers handlers on it), so it needs a
 * receiver made already, with its `close`. The error names the adapter, what it got and how it is mounted.
 */
export function mountedReceiver(
  value: unknown,
  spec: Pick<AdapterSpec<never, unknown>, 'name' | 'usage' | 'refuse'>,
  { holds = false, got = 'got' }: { holds?: boolean; got?: string } = {},
): AdapterReceiver {
  const receiver = value as AdapterReceiver | undefined;
  if (typeof receiver?.receive !== 'function' || (holds && typeof receiver.close !== 'function')) {
    const what = value === undefined ? 'none' : typeof value === 'function' ? 'a function' : 'something else';
    const factory = holds ? '' : ', or a function that creates one at the first request';
    throw configError(
      `${spec.name} needs a receiver (createReceiver from messaging-webhooks)${factory}; ${got} ${what}: ${spec.usage}.`,
    );
  }
  const refused = spec.refuse?.(receiver);
  if (refused !== undefined) throw configError(refused);
  return receiver;
}
