import { createReceiver, type DedupeStore } from '../../src/index.js';
import { createSignedRequest } from '../../src/testing.js';

/** A receiver on `store` (default leaseMs: 60 s) that records the ids its handler processed. */
export function recordingReceiver(store: DedupeStore, secret: string) {
  const processed: string[] = [];
  const receiver = createReceiver({ secrets: secret, store });
  receiver.on('message.delivered', (event) => {
    processed.push(event.id as string);
  });
  const deliver = (event: unknown) => {
    const { body, headers } = createSignedRequest(event, { secret });
    return receiver.receive({ method: 'POST', headers, rawBody: body });
  };
  return { processed, deliver };
}
