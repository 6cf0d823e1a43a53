/**
 * Result of an atomic claim. `claimed` carries the owner token that settles it; a late settle with a token
 * that no longer owns the key (the lease expired and another delivery claimed it) changes nothing.
 */
export type ClaimResult =
  | { status: 'claimed'; token: string }
  | { status: 'duplicate' }
  | { status: 'in_flight'; retryAfterMs: number };

/**
 * Where the receiver remembers which events it has processed. Every method is atomic per key.
 * A crash between claim and settle leaves a lease that expires: at-least-once, never at-most-once.
 * `Tx` is what a transactional store hands the handlers as ctx.tx (PostgreSQL: the transaction's client).
 */
export interface DedupeStore<Tx = undefined> {
  /** Claim `key` for `leaseMs` unless it is completed (duplicate) or claimed by a live lease (in_flight). */
  claim(key: string, leaseMs: number): Promise<ClaimResult>;
  /** Mark the key processed for `retentionMs`; false if `token` no longer owns it (nothing is changed then). */
  complete(key: string, token: string, retentionMs: number): Promise<boolean>;
  /**
   * Extend the lease of a claim still being processed to `leaseMs` from now (the store's clock): a heartbeat
   * while the event waits or runs. False if `token` no longer owns the key or it is completed (nothing changes).
   */
  renew(key: string, token: string, leaseMs: number): Promise<boolean>;
  /** Drop the claim so the service's retry processes the event again; false if `token` no longer owns it. */
  release(key: string, token: string): Promise<boolean>;
  /**
   * Optional: run the handlers and the completion as one unit of work (one SQL transaction), so the
   * event's effects and its "processed" mark commit together. When `work` throws, nothing of it commits.
   */
  transact?<R>(key: string, token: string, retentionMs: number, work: (tx: Tx) => Promise<R>): Promise<R>;
  /**
   * Optional, beside `transact`: claim `key` as the first statement of the transaction the handlers then run in,
   * so a delivery costs one transaction (claim, handlers' writes, completion, commit). A claim held by another
   * open transaction answers in_flight at once instead of waiting for it. The claim stays uncommitted until
   * `run` commits it with the work and the completion, or `abandon` (or a failing `work`) rolls it back.
   */
  claimInTransaction?(key: string, leaseMs: number): Promise<OpenClaimResult<Tx>>;
  close?(): Promise<void>;
}

/** A claim taken inside a transaction still open (DedupeStore.claimInTransaction), or why it was not taken. */
export type OpenClaimResult<Tx> =
  | (OpenClaim<Tx> & { status: 'claimed'; token: string })
  | { status: 'duplicate' }
  | { status: 'in_flight'; retryAfterMs: number };

/** The transaction a claim was taken in: run the work in it and commit, or roll it back. Call one, once. */
export interface OpenClaim<Tx> {
  /** Runs `work` in the claim's transaction, marks the key processed for `retentionMs`, commits; rolls back when `work` throws. */
  run<R>(retentionMs: number, work: (tx: Tx) => Promise<R>): Promise<R>;
  /** Rolls the claim back (the key is free again); once `run` started, does nothing: the run ends the transaction. */
  abandon(): Promise<void>;
}

/** The value a store hands handlers as ctx.tx; undefined for a store without `transact` (nothing to infer). */
export type StoreTx<S> = S extends DedupeStore<infer Tx> ? (unknown extends Tx ? undefined : Tx) : undefined;
