// The in-process benches' delivery: the n-th distinct 1 KiB message.delivered event of this process, signed at
// `now` (t=…,v1=HMAC-SHA256 of "t.body") with its headers as an HTTP parser hands them over.
import { createHmac } from 'node:crypto';

export const BODY_BYTES = 1024;

export function signedDelivery(secret, now, serial) {
  const event = {
    id: `evt_bench_${process.pid}_${serial}`,
    type: 'message.delivered',
    created_at: '2026-11-21T10:00:00+00:00',
    data: { message_id: `msg_${serial}`, to: '+15551234567', operator: 'op_vodafone_de', note: '' },
  };
  event.data.note = 'x'.repeat(BODY_BYTES - Buffer.byteLength(JSON.stringify(event)));
  const body = Buffer.from(JSON.stringify(event));
  const v1 = createHmac('sha256', secret).update(`${now}.`).update(body).digest('hex');
  // Out of an HTTP parser the header is one flat string.
  const header = Buffer.from(`t=${now},v1=${v1}`).toString();
  return { body, headers: { 'content-type': 'application/json', 'webhook-signature': header } };
}

let fresh = 0;
/** `count` deliveries signed now, each an event this process has not sent before. */
export function newDeliveries(secret, count) {
  const now = Math.floor(Date.now() / 1000);
  return Array.from({ length: count }, () => signedDelivery(secret, now, `new_${++fresh}`));
}
