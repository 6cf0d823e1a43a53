import type { SignatureFailureReason } from '../contract/reasons.js';
import type { HeaderSource } from '../contract/request.js';
import type { VerifyResult } from '../signature/index.js';
import type { Delivery } from './delivery.js';

/** The signature check of the receiver's profile: synchronous where the crypto is (node:crypto). */
export type SignatureCheck = (
  input: { headers: HeaderSource; body: string | Uint8Array },
  nowSeconds: number,
) => VerifyResult | Promise<VerifyResult>;

/**
 * Checks the signature over the raw body; on success the delivery carries the mode whose secret matched and
 * the signature's timestamp.
 */
export function verifyDelivery(
  delivery: Delivery,
  check: SignatureCheck,
  nowSeconds: number,
): SignatureFailureReason | undefined | Promise<SignatureFailureReason | undefined> {
  const result = check(
    { headers: delivery.request.headers, body: delivery.body as string | Uint8Array },
    nowSeconds,
  );
  if (result instanceof Promise) return result.then((settled) => accept(delivery, settled));
  return accept(delivery, result);
}

function accept(delivery: Delivery, result: VerifyResult): SignatureFailureReason | undefined {
  if (!result.ok) return result.reason;
  delivery.mode = result.mode;
  delivery.timestamp = result.timestamp;
  if (result.messageId !== undefined) delivery.messageId = result.messageId;
  return undefined;
}
