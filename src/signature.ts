/** Signatures: one profile describes a format; the verifier, the signers and the diagnostics all read it. */
export { type VerifyOptions, verifySignature, verifySignatureAsync } from './signature/one-shot.js';
export {
  type BodySignatureOptions,
  bodySignature,
  defaultProfile,
  defaultScheme,
  profilePresets,
  resolveProfile,
  type SignatureScheme,
  standardWebhooks,
} from './signature/presets.js';
export {
  buildProfile,
  createProfile,
  type SignatureProfile,
  type SignatureReading,
  type SignedDelivery,
} from './signature/profile.js';
export type {
  BodySignedContent,
  SignatureLocation,
  SignatureProfileConfig,
  TimestampSource,
} from './signature/profile-config.js';
export {
  type SignOptions,
  signPayload,
  signPayloadAsync,
  signRequest,
  signRequestAsync,
} from './signature/signer.js';
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
} from './signature/verifier.js';
