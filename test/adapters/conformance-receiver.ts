import { createProfile, createReceiver, defaultProfile, type SignatureProfile } from '../../src/index.js';
import { createConformanceOptions, type HandledEvent, recordHandledEvents } from './conformance-handlers.js';

export {
  ACCOUNT,
  accountRoute,
  FAILING_OPERATOR,
  type HandledEvent,
  LOOKUP_TIMEOUT_MS,
  MAX_BODY_BYTES,
  SECRET,
  SLOW_OPERATOR,
  TENANTS,
} from './conformance-handlers.js';

/**
 * The profiles the suite runs under: the default format, then one that differs in every part the config
 * can change (header names, syntax, hash, encoding, signed content, a message id).
 */
export const CONFORMANCE_PROFILES: readonly SignatureProfile[] = [
  defaultProfile,
  createProfile({
    name: 'conformance-alternate',
    signature: { header: 'X-Alt-Signature', syntax: 'v1-list' },
    timestamp: { header: 'X-Alt-Timestamp' },
    id: { header: 'X-Alt-Delivery' },
    hash: 'SHA-512',
    encoding: 'base64',
    signedContent: '{body}|{timestamp}|{id}',
  }),
];

export type ConformanceReceiver = ReturnType<typeof createReceiver>;

/** How the receiver under `profile` finds its secrets: looked up per account under the default profile. */
export function conformanceSecrets(profile: SignatureProfile): 'tenants' | 'static' {
  return profile === CONFORMANCE_PROFILES[0] ? 'tenants' : 'static';
}

/**
 * The receiver every in-process target mounts (createConformanceOptions): for every account on one route under
 * the default profile, one static secret under the others; its handlers record what they saw into `handled`.
 */
export function createConformanceReceiver(profile: SignatureProfile = defaultProfile): {
  receiver: ConformanceReceiver;
  handled: HandledEvent[];
} {
  const receiver = createReceiver({ ...createConformanceOptions(conformanceSecrets(profile)), profile });
  return { receiver, handled: recordHandledEvents(receiver) };
}
