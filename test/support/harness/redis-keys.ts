/** The two commands cleanup needs, as any node-redis client has them. */
interface ScanningClient {
  scanIterator(options: { MATCH: string; COUNT: number }): AsyncIterable<string[]>;
  del(keys: string[]): Promise<unknown>;
}

/** Deletes a test run's keys (`pattern` like `mw-test:<run>:*`), leaving the shared server as it was. */
export async function deleteKeys(client: ScanningClient, pattern: string): Promise<void> {
  for await (const keys of client.scanIterator({ MATCH: pattern, COUNT: 1000 })) {
    if (keys.length > 0) await client.del(keys);
  }
}
