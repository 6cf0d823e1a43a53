/**
 * Which connection of an ioredis Cluster carries the writes of a key. WAIT has no key, so ioredis would send it to
 * any node; sent on the connection of the key's master instead, it counts the replicas holding that
 * connection's writes, as it does on one Redis.
 */

/** The part of an ioredis Cluster (`new Cluster(…)` from `ioredis`) that says which node serves a slot. */
export interface IoRedisClusterRouting {
  /** Per slot, the node keys (`host:port`) serving it, master first; empty until the cluster map is loaded. */
  readonly slots: ReadonlyArray<ReadonlyArray<string> | undefined>;
  nodes(role: 'master'): ReadonlyArray<IoRedisClusterNode>;
}

/** One node's connection in an ioredis Cluster: the one the Cluster sends that node's commands on. */
export interface IoRedisClusterNode {
  readonly status: string;
  readonly options: { readonly host?: string; readonly port?: number };
  call(command: string, ...args: string[]): Promise<unknown>;
}

const encoder = new TextEncoder();
const TABLE = Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

/**
 * Redis Cluster's hash slot of a key: CRC16 (XMODEM) of its UTF-8 bytes modulo 16384, or of its hash tag's (the
 * text between the first `{` and the next `}`, when that is not empty).
 */
export function hashSlot(key: string): number {
  let hashed = key;
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) hashed = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of encoder.encode(hashed))
    crc = ((crc << 8) & 0xffff) ^ (TABLE[(crc >> 8) ^ byte] as number);
  return crc % 16384;
}

/** The node an ioredis Cluster sends `key`'s commands to now (its slot's master), or undefined if it knows none. */
export function masterNodeOf(cluster: IoRedisClusterRouting, key: string): IoRedisClusterNode | undefined {
  const nodeKey = cluster.slots[hashSlot(key)]?.[0];
  if (nodeKey === undefined) return undefined;
  return cluster.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === nodeKey);
}
