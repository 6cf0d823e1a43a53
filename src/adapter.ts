// The extension entry: what a framework adapter, a dedupe store, a durable engine or a crypto provider is built
// from. Applications import from the root entry instead. Every in-tree adapter (adapters/) imports only this
// entry, so each is a template for the next platform.
export { configError } from './base/errors.js';
export type { DeadLetterCode } from './contract/errors.js';
export {
  type NodeBodySource,
  type NodeRequestLike,
  type NodeRequestNames,
  type NodeResponseLike,
  nodeBodyReader,
  type RequestReceiver,
  readNodeBody,
  receiveNodeRequest,
  writeNodeOutcome,
} from './contract/node-io.js';
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
export {
  readWebBody,
  toWebResponse,
  type WebBodyReader,
  type WebBodySource,
  type WebRouteParams,
} from './contract/web-io.js';
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
/** The ledger the RabbitMQ and NATS queues keep in PostgreSQL. */
export type { LedgerOptions, LedgerPool } from './durable/ledger/ledger.js';
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
export { type AdapterReceiver, type ReceiverSource, receiverAtFirstRequest } from './receiver/source.js';
export type { ClaimResult, StoreTx } from './stores/types.js';

// Types the public signatures name, exported so a user can name them too (types only: nothing at runtime). The
// root entry stays small, so the types of its signatures are here: the receiver's options, handlers and logger,
// the verifier, signature profiles and stores.

export type { SignedPiece } from './base/bytes.js';
export type { DeliveryContext, Mode } from './contract/context.js';
export type { ErrorCode } from './contract/errors.js';
export type { ProviderBase } from './crypto/provider.js';
export type { CatalogueEvent, EventEnvelope } from './events/catalogue.js';
export type { RejectionDiagnostics, SignatureShape } from './observability/diagnostics.js';
export type { LineLogger, StructuredLogger } from './observability/logger.js';
export type { MetricsSeries } from './observability/metrics.js';
export type { TenantOf, TenantRequest } from './pipeline/3-tenant.js';
export type {
  AnyEventHandler,
  DefaultEventHandler,
  DefaultEventType,
  ErrorHandler,
  RejectionHandler,
} from './receiver/handlers.js';
export type { ModeHandling } from './receiver/options.js';
export type {
  SecretsLookup,
  TenantAccount,
  TenantSecretsAnswer,
  TenantSecretsOptions,
} from './receiver/tenant-secrets.js';
export type { BodyShapeProblem } from './signature/json-members.js';
export type { VerifyOptions } from './signature/one-shot.js';
export type { BodySignatureOptions } from './signature/presets.js';
export type {
  BodySignedContent,
  ContentTemplate,
  ResolvedConfig,
  SignatureLocation,
  Slot,
  TimestampSource,
} from './signature/profile-config.js';
export type { SignatureProblem, TimestampOffset } from './signature/profile-text.js';
export type { SignatureReading } from './signature/reading.js';
export type { ModeSecrets, SecretFormat, SecretList } from './signature/secrets.js';
export type { SignatureSyntax } from './signature/syntaxes/index.js';
export type { SignatureScan } from './signature/syntaxes/scan.js';
export type {
  SignedRequestParts,
  Tolerance,
  Verifier,
  VerifierOptions,
  VerifyResult,
} from './signature/verifier.js';
export type { FailOpenOptions } from './stores/fail-open.js';
export type { MemoryDedupeStoreOptions } from './stores/memory.js';
