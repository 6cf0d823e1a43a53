import { WebhookConfigError } from '../../base/errors.js';

/** The one command the check needs; every BullMQ Redis client has it (BullMQ reads its version with it). */
interface InfoClient {
  info(): Promise<string>;
}

/**
 * Refuses a Redis that can lose jobs it acknowledged, before the first 202 rests on it. Durable means the
 * append-only file is on (`aof_enabled:1`): every write is in the file before the next second at the latest,
 * so a restart or a crash of Redis keeps it. RDB snapshots alone do not count: whatever came after the last
 * one is lost on a crash (Redis's default save points snapshot a quiet server once an hour). And
 * `maxmemory-policy` must be `noeviction`: any other policy lets a full Redis drop jobs to make room.
 *
 * Reads INFO, not CONFIG, so the check also runs where CONFIG is renamed away or not granted (managed Redis).
 * Resolves with a warning when Redis would not answer INFO either; rejects with the settings to change.
 */
export async function checkRedisDurability(client: InfoClient | undefined): Promise<string | undefined> {
  // A queue on another backend than BullMQ's Redis one has no raw client to ask.
  if (typeof client?.info !== 'function') return unchecked('its BullMQ backend exposes no Redis client');
  let info: string;
  try {
    info = await client.info();
  } catch (error) {
    const message = String((error as Error)?.message ?? error);
    // Refused by Redis (renamed away, or not in the ACL): the check cannot run here; an outage is rethrown.
    if (!/unknown command|NOPERM|no permissions/i.test(message)) throw error;
    return unchecked(`INFO was refused: ${message}`);
  }
  const field = (name: string) => info.match(new RegExp(`^${name}:(.*?)\\r?$`, 'm'))?.[1];
  const aof = field('aof_enabled');
  const policy = field('maxmemory_policy');
  if (aof === undefined || policy === undefined)
    return unchecked('its INFO has no aof_enabled or maxmemory_policy');
  const problems: string[] = [];
  const fixes: string[] = [];
  if (aof !== '1') {
    problems.push(
      'appendonly is no (a restart or crash loses every job written since the last RDB snapshot, all of them without one)',
    );
    fixes.push('CONFIG SET appendonly yes');
  }
  if (policy !== 'noeviction') {
    problems.push(`maxmemory-policy is ${policy} (a full Redis evicts jobs; a job queue needs noeviction)`);
    fixes.push('CONFIG SET maxmemory-policy noeviction');
  }
  if (problems.length === 0) return undefined;
  throw new WebhookConfigError(
    `bullmqQueue refuses a Redis that can lose acknowledged jobs: ${problems.join('; ')}. ` +
      `Fix it with redis-cli ${fixes.join(', ')}, then CONFIG REWRITE (or the same settings in redis.conf); ` +
      'or pass allowVolatileRedis: true to bullmqQueue to accept losing jobs (tests, a throwaway Redis).',
  );
}

function unchecked(why: string): string {
  return `Could not check that Redis keeps acknowledged jobs (${why}). Make sure it runs with appendonly yes and maxmemory-policy noeviction, or jobs answered 202 can be lost.`;
}
