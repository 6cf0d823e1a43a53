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
  buildProfile,
  createProfile,
  type SignatureProfile,
  type SignatureReading,
  type SignedDelivery,
  type TimestampOffset,
} from './profile.js';
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
  nowSeconds,
  resolveTolerance,
  type SignedRequestParts,
  type Tolerance,
  type Verifier,
  type VerifierOptions,
  type VerifyResult,
} from './verifier.js';
