import {
  defaultProfile,
  type SignatureProfile,
  type SignedDelivery,
  signRequest,
} from '../signature/index.js';

export interface Signer {
  /** The profile webhooks are signed with: the go-live check signs its test events with it too. */
  readonly profile: SignatureProfile;
  /** What to send for `body` signed at `timestamp` (unix seconds): the signature headers, and the body. */
  sign(body: string, timestamp: number): SignedDelivery;
}

/**
 * All the emulator's signing goes through here, with the receiver library's own profiles: a receiver set up
 * with the same profile verifies what the emulator sends. A body-field profile returns the body with its
 * signature member, so the body to send comes back too.
 */
export function createSigner(secret: string, profile: SignatureProfile = defaultProfile): Signer {
  return {
    profile,
    sign: (body, timestamp) => signRequest({ payload: body, secret, timestamp, profile }),
  };
}
