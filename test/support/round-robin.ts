import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A round-robin load balancer in front of an instance pair: copies of an event land on both at once. */
export async function roundRobin(targets: string[]) {
  let next = 0;
  const server = createServer((req, res) => {
    const target = new URL(targets[next++ % targets.length] as string);
    const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      res.writeHead(502).end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
