import type { Emulator } from '../../src/emulator/index.js';

/** The emulator's state changes, for `until` to check its condition on each one (no polling). */
export const changesOf = (emulator: Emulator) => (listener: () => void) => emulator.state.subscribe(listener);

export interface CallOptions {
  method?: string;
  key?: string | null;
  body?: unknown;
  contentType?: string;
}

/** One call to the emulator's API with the test key, returning status, JSON body and headers. */
export async function call(emulator: Emulator, path: string, options: CallOptions = {}) {
  const key = options.key === undefined ? emulator.modes.test.keys[0] : options.key;
  const headers: Record<string, string> = {};
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const response = await fetch(`${emulator.url}${path}`, {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers,
    body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read fields of any answer.
  return { status: response.status, body: (await response.json()) as any, headers: response.headers };
}

/** Every delivery of the emulator acknowledged or given up, and every message past its last step. */
export const settled = (emulator: Emulator) =>
  [...emulator.state.messages.values()].every((m) => m.status === 'delivered' || m.status === 'failed') &&
  [...emulator.state.messages.values()].every((m) => m.events.length > 0) &&
  [...emulator.state.deliveries.values()].every((d) => d.state === 'acknowledged' || d.state === 'failed');

export const fast = { schedule: { submitMs: 5, resultMs: 10, jitterMs: 5 }, retry: { baseMs: 5, capMs: 50 } };
