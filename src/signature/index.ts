/** Signatures: one profile describes a format; the verifier, the signers and the diagnostics all read it. */
export { type VerifyOptions, verifySignature, verifySignatureAsync } from './one-shot.js';
export {
  type BodySignatureOptions,
  bodySignature,
  defaultProfile,
  profilePresets,
  resolveProfile,
  standardWebhooks,
} from './presets.js';
export {
  nowSeconds,
  type SignatureProfile,
  type SignatureReading,
  type SignedDelivery,
  type SignedRequestParts,
  type TimestampOffset,
  type VerifyResult,
} from './profile.js';
export { buildProfile, createProfile } from './profile-build.js';
export type {
  BodySignedContent,
  SignatureLocation,
  SignatureProfileConfig,
  TimestampSource,
} from './profile-config.js';
export {
  type SignOptions,
  signPayload,
  signPayloadAsync,
  signRequest,
  signRequestAsync,
} from './signer.js';
export {
  candidateCheck,
  createVerifier,
  DEFAULT_TOLERANCE_SECONDS,
  resolveTolerance,
  type Tolerance,
  type Verifier,
  type VerifierOptions,
} from './verifier.js';
