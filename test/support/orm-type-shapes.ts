import type { Knex } from 'knex';
import type { Kysely } from 'kysely';

/*
 * What the ORM type tests (*.test-d.ts) compile against: declared, never made, since those files only
 * typecheck. Imported by no test that runs.
 */

/** An application's Kysely schema, written through ctx.tx. */
export interface AppDB {
  messages: { id: string; status: string };
}
export declare const knex: Knex;
export declare const db: Kysely<AppDB>;
