// The extension entry: what a dedupe store, a durable job engine, a crypto provider or a tracer is built from.
// Applications import from the root entry; framework adapters from messaging-webhooks/adapter.
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
  ProviderBase,
  SyncCryptoProvider,
} from './crypto/provider.js';
/** The ledger the RabbitMQ and NATS queues keep in PostgreSQL. */
export type { LedgerOptions, LedgerPool, NamedStatement } from './durable/ledger/ledger.js';
export type { LedgerQueue } from './durable/ledger/queue.js';
export type { DispatchingReceiver, DurableJob, EnqueueResult } from './durable/port.js';
/** The inbox the ORM stores are: a dedupe store on any SQL client, from one statement runner and one transaction. */
export type { SqlAnswer, SqlDialect, SqlInbox, SqlInboxDriver } from './stores/sql-inbox.js';
export type { ClaimResult, OpenClaim, OpenClaimResult, StoreTx } from './stores/types.js';
