import { createServer, type Socket } from 'node:net';

export interface SilentServer {
  port: number;
  close(): Promise<void>;
}

/** A TCP server on 127.0.0.1 that accepts connections and never answers: a hung database or proxy. */
export async function silentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
