import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * The WebhookInbox models of sql/*.prisma against the tables sql/*.sql create: each column's name, type,
 * nullability and default, the primary key and the index, the model read from its text (Prisma's own schema
 * engine needs a download this suite does not make) and the table from information_schema after running the
 * documented SQL under a table name of this run.
 */
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const table = `mw_orm3_schema_${randomUUID().replaceAll('-', '').slice(0, 10)}`;

/** One column as both sides are compared: name, type with its length or precision, nullable, has a default. */
interface Column {
  name: string;
  type: string;
  nullable: boolean;
  defaulted: boolean;
}
interface Shape {
  columns: Column[];
  primaryKey: string[];
  indexes: Array<{ name: string; columns: string[] }>;
}

/** The types a Prisma field becomes on each database, by its `@db.` attribute or, without one, its scalar type. */
const PRISMA_TYPES: Record<'postgres' | 'mysql', Record<string, string>> = {
  postgres: { String: 'text', 'db.Timestamptz(6)': 'timestamp with time zone(6)' },
  mysql: {
    'db.VarBinary(255)': 'varbinary(255)',
    'db.VarChar(10)': 'varchar(10)',
    'db.VarChar(64)': 'varchar(64)',
    'db.DateTime(3)': 'datetime(3)',
  },
};

function modelShape(file: string, dialect: 'postgres' | 'mysql'): Shape {
  const text = readFileSync(new URL(`../../sql/${file}`, import.meta.url), 'utf8');
  const body = /model WebhookInbox \{([^}]*)\}/.exec(text)?.[1] ?? '';
  const shape: Shape = { columns: [], primaryKey: [], indexes: [] };
  const columnOf = new Map<string, string>();
  for (const line of body.split('\n').map((l) => l.trim())) {
    const index = /^@@index\(\[(\w+)\], map: "(\w+)"\)/.exec(line);
    if (index) {
      shape.indexes.push({ name: index[2] as string, columns: [index[1] as string] });
      continue;
    }
    const field = /^(\w+)\s+(\w+)(\?)?\s*(.*)$/.exec(line);
    if (!field || line.startsWith('@@')) continue;
    const [, name, scalar, optional, attributes = ''] = field as unknown as string[];
    const column = /@map\("(\w+)"\)/.exec(attributes)?.[1] ?? (name as string);
    columnOf.set(name as string, column);
    const db = /@(db\.\w+(?:\([\d, ]+\))?)/.exec(attributes)?.[1];
    const type = PRISMA_TYPES[dialect][db ?? (scalar as string)] ?? `unmapped ${db ?? scalar}`;
    shape.columns.push({
      name: column,
      type,
      nullable: optional === '?',
      defaulted: attributes.includes('@default('),
    });
    if (attributes.includes('@id')) shape.primaryKey.push(column);
  }
  for (const index of shape.indexes) index.columns = index.columns.map((f) => columnOf.get(f) ?? f);
  return shape;
}

/** The documented SQL, for this run's table: the default name (and its index's) replaced. */
function documentedSql(file: string): string[] {
  const text = readFileSync(new URL(`../../sql/${file}`, import.meta.url), 'utf8').replaceAll(
    'webhook_inbox',
    table,
  );
  return text
    .split(/;\s*\n/)
    .map((statement) => statement.replace(/^--.*$/gm, '').trim())
    .filter((statement) => statement !== '');
}

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
const mysqlPool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 1 });

afterAll(async () => {
  await pool.query(`DROP TABLE IF EXISTS "${table}"`);
  await mysqlPool.query(`DROP TABLE IF EXISTS \`${table}\``);
  await pool.end();
  await mysqlPool.end();
});

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
/** The model with its default table and index names as this run's. */
const forThisRun = (shape: Shape): Shape => ({
  ...shape,
  indexes: shape.indexes.map((i) => ({ ...i, name: i.name.replace('webhook_inbox', table) })),
});

describe('the Prisma models of sql/ describe the tables the SQL of sql/ creates', () => {
  it('on PostgreSQL: sql/webhook_inbox.prisma and sql/webhook_inbox.sql', async () => {
    for (const statement of documentedSql('webhook_inbox.sql')) await pool.query(statement);
    const { rows } = await pool.query(
      `SELECT column_name AS name, data_type, datetime_precision, is_nullable, column_default
       FROM information_schema.columns WHERE table_name = $1`,
      [table],
    );
    const columns: Column[] = rows.map((row) => ({
      name: row.name,
      type: row.datetime_precision === null ? row.data_type : `${row.data_type}(${row.datetime_precision})`,
      nullable: row.is_nullable === 'YES',
      defaulted: row.column_default !== null,
    }));
    const keys = await pool.query(
      `SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
       WHERE i.indrelid = $1::regclass AND i.indisprimary`,
      [table],
    );
    const indexes = await pool.query(
      `SELECT c.relname AS name, array_agg(a.attname::text ORDER BY a.attnum) AS columns
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
       WHERE i.indrelid = $1::regclass AND NOT i.indisprimary GROUP BY c.relname`,
      [table],
    );
    const model = forThisRun(modelShape('webhook_inbox.prisma', 'postgres'));
    expect(columns.sort(byName)).toEqual(model.columns.sort(byName));
    expect(keys.rows.map((row) => row.name)).toEqual(model.primaryKey);
    expect(indexes.rows).toEqual(model.indexes);
  });

  it('on MariaDB/MySQL: sql/webhook_inbox.mysql.prisma and sql/webhook_inbox.mysql.sql', async () => {
    for (const statement of documentedSql('webhook_inbox.mysql.sql')) await mysqlPool.query(statement);
    const [rows] = (await mysqlPool.query(
      `SELECT column_name AS name, column_type, is_nullable, column_default, column_key
       FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ?`,
      [table],
    )) as unknown as [Array<Record<string, string | null>>];
    const columns: Column[] = rows.map((row) => ({
      name: String(row.name),
      type: String(row.column_type).toLowerCase(),
      nullable: row.is_nullable === 'YES',
      // MariaDB reports a nullable column's missing default as the text NULL.
      defaulted: row.column_default !== null && row.column_default !== 'NULL',
    }));
    const [stats] = (await mysqlPool.query(
      `SELECT index_name AS name, column_name AS col FROM information_schema.statistics
       WHERE table_schema = DATABASE() AND table_name = ? ORDER BY index_name, seq_in_index`,
      [table],
    )) as unknown as [Array<{ name: string; col: string }>];
    const model = forThisRun(modelShape('webhook_inbox.mysql.prisma', 'mysql'));
    expect(columns.sort(byName)).toEqual(model.columns.sort(byName));
    expect(stats.filter((s) => s.name === 'PRIMARY').map((s) => s.col)).toEqual(model.primaryKey);
    expect(
      stats.filter((s) => s.name !== 'PRIMARY').map((s) => ({ name: s.name, columns: [s.col] })),
    ).toEqual(model.indexes);
  });
});
