import { option, rules } from '../base/options.js';
import { isFinal, type TrackedMessage } from './record.js';
import type { StatusStore } from './store.js';

export interface MemoryStatusStoreOptions {
  /** Most messages kept; past it the oldest final one goes first (else the oldest open one). Default 100000. */
  maxEntries?: number;
  /** How long a final message is kept after it became final (milliseconds). Default 30 days. */
  retentionMs?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

const WHERE = 'new MemoryStatusStore(…): ';
const COUNT = rules.whole({ min: 1 });
export const DEFAULT_STATUS_RETENTION_MS = 30 * 24 * 3600_000;

const copy = (record: TrackedMessage): TrackedMessage => ({ ...record, history: [...record.history] });

/**
 * The default status store: one process, in memory, bounded. Each write is a compare and set on the version,
 * made in one synchronous step, so concurrent writers in the process never both win.
 */
export class MemoryStatusStore implements StatusStore {
  readonly maxEntries: number;
  readonly retentionMs: number;
  readonly #now: () => number;
  readonly #records = new Map<string, TrackedMessage>();
  /** Final messages in the order they became final: the first to go by retention or by the bound. */
  readonly #finals = new Map<string, number>();

  constructor(options: MemoryStatusStoreOptions = {}) {
    this.maxEntries = option('maxEntries', options.maxEntries, 100_000, COUNT, WHERE);
    this.retentionMs = option('retentionMs', options.retentionMs, DEFAULT_STATUS_RETENTION_MS, COUNT, WHERE);
    this.#now = options.now ?? Date.now;
  }

  /** Messages kept now. */
  get size(): number {
    return this.#records.size;
  }

  read(messageId: string): Promise<TrackedMessage | undefined> {
    this.#expire();
    const record = this.#records.get(messageId);
    return Promise.resolve(record && copy(record));
  }

  write(record: TrackedMessage, expectedVersion: number): Promise<boolean> {
    this.#expire();
    const stored = this.#records.get(record.messageId);
    if ((stored?.version ?? 0) !== expectedVersion) return Promise.resolve(false);
    this.#records.set(record.messageId, copy(record));
    if (isFinal(record.status) && !this.#finals.has(record.messageId))
      this.#finals.set(record.messageId, this.#now());
    this.#bound();
    return Promise.resolve(true);
  }

  open(expectedBefore: number, limit: number): Promise<TrackedMessage[]> {
    const open = [...this.#records.values()]
      .filter((record) => !isFinal(record.status) && record.expectedAt <= expectedBefore)
      .sort((a, b) => a.expectedAt - b.expectedAt)
      .slice(0, limit);
    return Promise.resolve(open.map(copy));
  }

  countOpen(): Promise<number> {
    return Promise.resolve(this.#records.size - this.#finals.size);
  }

  async close(): Promise<void> {}

  #expire(): void {
    const oldest = this.#now() - this.retentionMs;
    for (const [messageId, finalAt] of this.#finals) {
      if (finalAt > oldest) break;
      this.#forget(messageId);
    }
  }

  #bound(): void {
    while (this.#records.size > this.maxEntries) {
      const first = this.#finals.keys().next();
      this.#forget(first.done ? (this.#records.keys().next().value as string) : first.value);
    }
  }

  #forget(messageId: string): void {
    this.#records.delete(messageId);
    this.#finals.delete(messageId);
  }
}
