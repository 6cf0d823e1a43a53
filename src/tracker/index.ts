// messaging-webhooks/tracker: each message's true status, its stores, reconciliation and the service client.
export { MemoryStatusStore, type MemoryStatusStoreOptions } from './memory-store.js';
export type { ReceiptLatencySeries, TrackerMetricsSnapshot } from './metrics.js';
export { PostgresStatusStore, type PostgresStatusStoreOptions } from './postgres-store.js';
export type { ReconcileOptions, ReconcileSummary } from './reconcile.js';
export type {
  MessageStatusView,
  OpenStatus,
  ReceiptStatus,
  StatusSource,
  StatusStep,
  StatusTransition,
  StatusViewBase,
  TrackedMessage,
  TrackedStatus,
  UnknownStatus,
} from './record.js';
export { RedisStatusStore, type RedisStatusStoreOptions } from './redis-store.js';
export type { Observation, Precedence } from './rules.js';
export {
  createServiceClient,
  type ServiceClient,
  type ServiceClientOptions,
  ServiceError,
  type ServiceMessageStatus,
} from './service-client.js';
export type { StatusStore } from './store.js';
export {
  createMessageTracker,
  type MessageTracker,
  type MessageTrackerOptions,
  type TrackedEvent,
  type TransitionHandler,
} from './tracker.js';
