import { kindOf, WebhookConfigError } from '../base/errors.js';
import { type SqlAnswer, type SqlDialect, SqlInbox } from './sql-inbox.js';
import { StoreUnavailableError } from './unavailable.js';

/** The interactive-transaction options of Prisma's `$transaction(fn, options)` the store sets. */
export interface PrismaTransactionOptions {
  maxWait?: number;
  timeout?: number;
}

/** The members of a Prisma client (a generated `PrismaClient`, extended or not) the store uses. */
export interface PrismaClientLike {
  // biome-ignore lint/suspicious/noExplicitAny: each generated client types its transaction client its own way
  $transaction(work: (tx: any) => Promise<any>, options?: PrismaTransactionOptions): Promise<any>;
  // biome-ignore lint/suspicious/noExplicitAny: raw values of any type, typed by the database
  $queryRawUnsafe(query: string, ...values: any[]): PromiseLike<unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  $executeRawUnsafe(query: string, ...values: any[]): PromiseLike<number>;
}

/** What handlers get as ctx.tx: the transaction client `prisma.$transaction(async (tx) => …)` hands its callback. */
export type PrismaTx<P extends PrismaClientLike> = P extends {
  // biome-ignore lint/suspicious/noExplicitAny: matches the callback form of $transaction, whatever it returns
  $transaction(work: (tx: infer Tx) => any, options?: any): any;
}
  ? Tx
  : never;

/** The subset of the raw-query members a transaction client keeps. */
type RawClient = Pick<PrismaClientLike, '$queryRawUnsafe' | '$executeRawUnsafe'>;

export interface PrismaDedupeStoreOptions<P extends PrismaClientLike> {
  /** The app's Prisma client (Prisma 7, with `@prisma/adapter-pg` or `@prisma/adapter-mariadb`). */
  prisma: P;
  /** The inbox table. Default `webhook_inbox` (the `WebhookInbox` model of sql/webhook_inbox*.prisma). */
  table?: string;
  /** The database, when the client does not say (a client wrapped by something other than `$extends`). */
  dialect?: 'postgres' | 'mysql';
  /**
   * Longest run of an event's transaction (Prisma's interactive-transaction `timeout`, milliseconds): the
   * handlers and the completion. Past it Prisma rolls the transaction back and the event is answered 503 and
   * retried. Default: the client's `transactionOptions.timeout`, else Prisma's 5000.
   */
  transactionTimeoutMs?: number;
  /** Longest wait for a connection to start the transaction (Prisma's `maxWait`). Default: the client's, else 2000. */
  transactionMaxWaitMs?: number;
  /** Longest wait for one claim, renewal, completion or release (milliseconds, default 3000). */
  operationTimeoutMs?: number;
}

const STORE = 'PrismaDedupeStore';
const MIGRATION =
  'the migration of the WebhookInbox model in sql/webhook_inbox.prisma or sql/webhook_inbox.mysql.prisma (or sql/webhook_inbox*.sql)';

/**
 * Dedupe store on the app's Prisma client: the inbox table of the PostgreSQL or MySQL store, and the handlers run
 * in one Prisma interactive transaction that also records the completion. Handlers get its transaction client as
 * ctx.tx: `await ctx.tx.order.update(…)` commits exactly once, together with the "processed" mark, or rolls
 * back with it.
 */
export class PrismaDedupeStore<P extends PrismaClientLike> extends SqlInbox<PrismaTx<P>> {
  constructor(options: PrismaDedupeStoreOptions<P>) {
    const prisma = checkPrisma<P>(options?.prisma);
    const dialect = options.dialect ?? prismaDialect(prisma);
    const timeouts = transactionOptions(options);
    super({
      store: STORE,
      dialect,
      table: options.table ?? 'webhook_inbox',
      migration: MIGRATION,
      operationTimeoutMs: options.operationTimeoutMs,
      run: (text, values, tx) => run((tx ?? prisma) as RawClient, text, values),
      transaction: async (work) => {
        try {
          return await prisma.$transaction(work, timeouts);
        } catch (error) {
          throw transactionEnded(error, timeouts);
        }
      },
      isMissingTable: (error) => adapterCause(error)?.kind === 'TableDoesNotExist',
    });
  }
}

/** The statements whose rows are read (the claim, the read of a held key); the others answer a count. */
const READS_ROWS = /^\s*(WITH|SELECT)\b/i;

async function run(client: RawClient, text: string, values: unknown[]): Promise<SqlAnswer> {
  try {
    if (READS_ROWS.test(text)) {
      const rows = (await client.$queryRawUnsafe(text, ...values)) as SqlAnswer['rows'];
      return { rows, affected: rows.length };
    }
    return { rows: [], affected: Number(await client.$executeRawUnsafe(text, ...values)) };
  } catch (error) {
    throw connectionLost(error);
  }
}

function transactionOptions(options: PrismaDedupeStoreOptions<PrismaClientLike>): PrismaTransactionOptions {
  const timeouts: PrismaTransactionOptions = {};
  for (const [name, key] of [
    ['transactionTimeoutMs', 'timeout'],
    ['transactionMaxWaitMs', 'maxWait'],
  ] as const) {
    const value = options[name];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value <= 0) {
      throw new WebhookConfigError(
        `new PrismaDedupeStore({ ${name} }) must be a positive whole number of milliseconds, got ${JSON.stringify(value)}.`,
      );
    }
    timeouts[key] = value;
  }
  return timeouts;
}

/** The driver adapter's own account of a failed query, which Prisma keeps in the error's meta. */
function adapterCause(error: unknown): { kind?: unknown } | undefined {
  const meta = (error as { meta?: { driverAdapterError?: { cause?: { kind?: unknown } } } })?.meta;
  return meta?.driverAdapterError?.cause;
}

/** Prisma's codes for a database it cannot reach or whose connection closed. */
const UNREACHABLE = new Set(['P1001', 'P1002', 'P1008', 'P1017']);
const CLOSED_KINDS = new Set([
  'ConnectionClosed',
  'DatabaseNotReachable',
  'SocketTimeout',
  'TooManyConnections',
]);

function connectionLost(error: unknown): unknown {
  const code = (error as { code?: unknown })?.code;
  const kind = adapterCause(error)?.kind;
  if (!UNREACHABLE.has(String(code)) && !CLOSED_KINDS.has(String(kind))) return error;
  return new StoreUnavailableError(
    'Prisma lost the database connection or cannot reach the database: nothing of the event committed; it is ' +
      'answered 503 and retried.',
    { cause: error },
  );
}

/**
 * Prisma's P2028 (its interactive transaction expired, or could not start in time) as the store's failure: the
 * handlers' writes and the mark were rolled back together, so the event is answered 503 and retried, never
 * acknowledged with its effects lost.
 */
function transactionEnded(error: unknown, timeouts: PrismaTransactionOptions): unknown {
  if ((error as { code?: unknown })?.code !== 'P2028') return connectionLost(error);
  const message = String((error as Error).message);
  if (/expired transaction|timeout for this transaction/i.test(message)) {
    const limit = timeouts.timeout === undefined ? "Prisma's default" : `${timeouts.timeout} ms`;
    return new StoreUnavailableError(
      `The event's Prisma interactive transaction ran past its timeout (${limit}): Prisma rolled back the ` +
        "handlers' writes with the processed mark, and the event is answered 503 and retried. Raise " +
        'transactionTimeoutMs of new PrismaDedupeStore({ prisma, transactionTimeoutMs }) above the slowest ' +
        'handler, or make the handler do less inside ctx.tx.',
      { cause: error },
    );
  }
  return new StoreUnavailableError(
    "Prisma could not start the event's interactive transaction in time (no free connection within maxWait): " +
      'the event is answered 503 and retried. Raise transactionMaxWaitMs of new PrismaDedupeStore() or the ' +
      "driver adapter's pool size.",
    { cause: error },
  );
}

function checkPrisma<P extends PrismaClientLike>(prisma: unknown): P {
  const candidate = prisma as (Partial<PrismaClientLike> & { $disconnect?: unknown }) | undefined;
  const raw =
    typeof candidate?.$queryRawUnsafe === 'function' && typeof candidate.$executeRawUnsafe === 'function';
  // A transaction client keeps $transaction (a nested one) but not the client's lifecycle: no $disconnect.
  if (raw && typeof candidate?.$disconnect !== 'function') {
    throw new WebhookConfigError(
      'new PrismaDedupeStore({ prisma }) got a Prisma transaction client: pass the PrismaClient; the store opens an interactive transaction per event.',
    );
  }
  if (!raw) {
    throw new WebhookConfigError(
      `new PrismaDedupeStore({ prisma }) needs prisma: the app's PrismaClient (new PrismaClient({ adapter: new PrismaPg(…) })), got ${kindOf(prisma)}.`,
    );
  }
  return candidate as P;
}

function prismaDialect(prisma: object): SqlDialect {
  const config = (prisma as { _engineConfig?: { activeProvider?: unknown } })._engineConfig;
  const provider = config?.activeProvider ?? (prisma as { _activeProvider?: unknown })._activeProvider;
  if (provider === 'postgresql' || provider === 'postgres') return 'postgres';
  if (provider === 'mysql') return 'mysql';
  throw new WebhookConfigError(
    `new PrismaDedupeStore({ prisma }) supports Prisma on PostgreSQL and MySQL/MariaDB, got a client for ${JSON.stringify(String(provider))}: pass dialect: 'postgres' or 'mysql' if it speaks one of them.`,
  );
}
