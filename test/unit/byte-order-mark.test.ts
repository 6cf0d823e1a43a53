import { describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { signPayload } from '../../src/signature/index.js';
import { deliveredEvent, expectAccepted, expectRejected, SECRET } from '../support/unit.js';

const BOM = '\uFEFF';

/** A delivery whose signed bytes are exactly `text` (mark included), handed over in the given form. */
function deliveryOf(text: string, form: 'Buffer' | 'Uint8Array' | 'string') {
  const bytes = new TextEncoder().encode(text);
  const rawBody = form === 'string' ? text : form === 'Buffer' ? Buffer.from(bytes) : bytes;
  const header = signPayload({ payload: bytes, secret: SECRET });
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-signature': header },
    rawBody,
  };
}

describe('a UTF-8 byte order mark before the JSON', () => {
  for (const form of ['Buffer', 'Uint8Array', 'string'] as const) {
    it(`is ignored, whatever form the body takes (${form}): the signed event is processed`, async () => {
      const receiver = createReceiver({ secrets: SECRET });
      const seen: string[] = [];
      receiver.on('message.delivered', (event) => {
        seen.push(event.id as string);
      });
      const event = deliveredEvent();
      expectAccepted(await receiver.receive(deliveryOf(BOM + JSON.stringify(event), form)), 200);
      expect(seen).toEqual([event.id]);
    });
  }

  it('only one leading mark is ignored: a second one is not JSON', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    for (const form of ['Buffer', 'Uint8Array', 'string'] as const) {
      const outcome = await receiver.receive(deliveryOf(BOM + BOM + JSON.stringify(deliveredEvent()), form));
      expectRejected(outcome, 400, 'invalid_json');
    }
  });
});
