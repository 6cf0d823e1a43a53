import { describe, expect, it } from 'vitest';
import { lockedElsewhere, noSetStatement } from '../../src/stores/sql-inbox-sql.js';

const driver = (fields: object) => Object.assign(new Error('driver'), fields);

describe('the SQL inbox reads what the driver said, through what the ORM wrapped it in', () => {
  it('a lock wait or a deadlock, by code, errno or the ORM’s originalCode', () => {
    expect(lockedElsewhere(driver({ code: '55P03' }))).toBe(true);
    expect(lockedElsewhere(driver({ code: 'ER_LOCK_DEADLOCK' }))).toBe(true);
    expect(lockedElsewhere(driver({ errno: 1205 }))).toBe(true);
    expect(lockedElsewhere(new Error('query failed', { cause: driver({ originalCode: '1213' }) }))).toBe(
      true,
    );
    expect(lockedElsewhere({ driverError: driver({ code: '40P01' }) })).toBe(true);
    expect(lockedElsewhere(driver({ code: 'ER_PARSE_ERROR', errno: 1064 }))).toBe(false);
  });

  it('MySQL’s parse error, and nothing else', () => {
    expect(noSetStatement(driver({ code: 'ER_PARSE_ERROR' }))).toBe(true);
    expect(noSetStatement(driver({ errno: 1064 }))).toBe(true);
    expect(noSetStatement({ meta: { driverAdapterError: { cause: { originalCode: '1064' } } } })).toBe(true);
    expect(noSetStatement(driver({ code: 'ER_LOCK_WAIT_TIMEOUT', errno: 1205 }))).toBe(false);
    expect(noSetStatement(driver({ code: '42601' }))).toBe(false);
  });
});
