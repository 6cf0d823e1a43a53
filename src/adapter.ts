// The extension entry: what a framework adapter, a dedupe store, a durable engine or a crypto provider is built
// from. Applications import from the root entry instead.
export type { DeadLetterCode } from './base/errors.js';
export type { Outcome } from './contract/outcome.js';
export { REQUEST_ID_HEADER } from './contract/outcome.js';
export type { ReasonCode, RejectionReason, SignatureFailureReason } from './contract/reasons.js';
export {
  BODY_LENGTH_MISMATCH,
  BODY_TIMEOUT,
  BODY_TOO_LARGE,
  type BodyRead,
  type BodyReader,
  getHeader,
  type HeaderSource,
  isJsonContentType,
  type ReceiveRequest,
} from './contract/request.js';
export type {
  DeliveryStart,
  JobStart,
  TraceAttributes,
  TraceCarrier,
  TraceSpan,
  Tracing,
} from './contract/tracing.js';
export { defaultCryptoProvider } from './crypto/default.js';
export type {
  AsyncCryptoProvider,
  CryptoProvider,
  DigestEncoding,
  HashName,
  SyncCryptoProvider,
} from './crypto/provider.js';
export {
  type ChangeOptions,
  type DeadLetter,
  DeadLetterError,
  type DeadLetterErrorCode,
  type DeadLetterProgress,
  type DeadLetterSelection,
  type DeadLetters,
  type PurgeResult,
  type ReplayResult,
  type SkippedDeadLetter,
  type SkipReason,
} from './durable/dead-letters.js';
export type {
  DispatchingReceiver,
  DurableJob,
  DurableQueue,
  DurableQueueCounts,
  DurableQueueOptions,
  DurableWorker,
  DurableWorkerOptions,
  DurationCounts,
  EnqueueResult,
  RetryOptions,
  RunDurations,
  WorkerCounters,
} from './durable/port.js';
export type { ClaimResult, StoreTx } from './stores/types.js';
