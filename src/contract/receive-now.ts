import type { Outcome } from './outcome.js';
import type { ReceiveRequest } from './request.js';

/** A receiver's walk as it ran: the outcome itself when nothing waited, or a promise of it. */
export type ReceiveNow = (request: ReceiveRequest) => Outcome | Promise<Outcome>;

/**
 * Where a receiver's `receive` function keeps the walk that gives an outcome without a promise when nothing
 * waited. Adapters use it: each promise costs a turn of the microtask queue and a lookup of `then` on the
 * outcome, on every request. A global symbol, so that an adapter and a receiver from two copies of the package
 * still find it.
 */
const RECEIVE_NOW: unique symbol = Symbol.for('messaging-webhooks.receive-now');

/**
 * The walk, with the `receive` it belongs to: a spy or wrapper that copies a function's properties onto itself
 * (vitest's spies do) then carries a walk that is not its own, and is called as itself.
 */
interface Carried {
  receive: Receive;
  now: ReceiveNow;
}

type Receive = ((request: ReceiveRequest) => Promise<Outcome>) & { [RECEIVE_NOW]?: Carried };

/** `receive()` as the public API has it, always a promise, carrying the walk that may answer at once. */
export function receiveOf(now: ReceiveNow): (request: ReceiveRequest) => Promise<Outcome> {
  const receive: Receive = (request) => {
    const outcome = now(request);
    return outcome instanceof Promise ? outcome : Promise.resolve(outcome);
  };
  receive[RECEIVE_NOW] = { receive, now };
  return receive;
}

/**
 * Runs a request through a receiver, taking its outcome at once when nothing waited. Read from `receive` on
 * every request: a receiver whose `receive` was wrapped or replaced (a spy, a decorator) is called as it is,
 * and what it returns is made a native promise, the one kind of promise callers tell from an outcome.
 */
export function receiveNow(
  receiver: { receive(request: ReceiveRequest): Promise<Outcome> },
  request: ReceiveRequest,
): Outcome | Promise<Outcome> {
  const receive = receiver.receive as Receive;
  const carried = receive[RECEIVE_NOW];
  return carried?.receive === receive ? carried.now(request) : Promise.resolve(receiver.receive(request));
}
