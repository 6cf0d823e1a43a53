import type { ClaimResult, DedupeStore } from '../../src/stores/types.js';

/** Reaches one instance's `/store/<operation>?…` route: a Worker's fetch, or an HTTP request to a process. */
export type InstanceFetch = (path: string) => Promise<Response>;

interface StoreReply {
  result?: unknown;
  error?: { name: string; message: string };
}

/**
 * A dedupe store as the test process sees one that runs elsewhere (inside workerd, inside Deno): each operation
 * runs in an instance's own store, the instances taking turns, so a claim made in one is settled, renewed or
 * found in flight from another; each key goes as its JSON string. `query` is added to every call (the instance's test options).
 */
export function storeAcrossInstances(
  instances: InstanceFetch[],
  query: Record<string, string> = {},
): DedupeStore<unknown> {
  let calls = 0;
  const call = async (operation: string, params: Record<string, string>) => {
    const instance = instances[calls++ % instances.length] as InstanceFetch;
    const reply = (await (
      await instance(`/store/${operation}?${new URLSearchParams({ ...params, ...query })}`)
    ).json()) as StoreReply;
    if (reply.error) throw Object.assign(new Error(reply.error.message), { name: reply.error.name });
    return reply.result;
  };
  // As JSON: a query string spells a lone surrogate of a key U+FFFD, as UTF-8 does.
  const keyed = (key: string) => JSON.stringify(key);
  return {
    claim: (key, leaseMs) => call('claim', { key: keyed(key), ms: String(leaseMs) }) as Promise<ClaimResult>,
    complete: (key, token, ms) =>
      call('complete', { key: keyed(key), token, ms: String(ms) }) as Promise<boolean>,
    renew: (key, token, ms) => call('renew', { key: keyed(key), token, ms: String(ms) }) as Promise<boolean>,
    release: (key, token) => call('release', { key: keyed(key), token }) as Promise<boolean>,
  };
}
