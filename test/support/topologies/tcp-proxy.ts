import type { AddressInfo } from 'node:net';
import { createConnection, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy that forwards to one port on 127.0.0.1, as PgBouncer, HAProxy or a cloud endpoint does in front
 * of PostgreSQL: `retarget` points it at another server (the promoted standby) and drops the open connections.
 */
export async function tcpProxy(target: number) {
  const open = new Set<Socket>();
  let current = target;
  const server = createServer((inbound) => {
    const outbound = createConnection({ host: '127.0.0.1', port: current });
    for (const socket of [inbound, outbound]) {
      open.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        open.delete(socket);
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    retarget(port: number) {
      current = port;
      for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
