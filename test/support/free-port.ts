import { createServer } from 'node:net';

/*
 * A port for a child that must be told its port before it starts (redis-server, next start). A test that
 * starts a server itself listens on port 0 and reads the port it got instead.
 *
 * Probing with listen(0) and handing the port on is a race: between the probe's close and the child's bind,
 * the kernel may give the same port to anyone asking for an ephemeral one (another test's listen(0), any
 * outgoing connection to Redis or PostgreSQL). So ports come from below Linux's ephemeral range
 * (32768-60999), which the kernel never hands out by itself, starting at an offset of this process's own
 * (its pid), so test processes running at once start far apart; each is probed before it is handed on.
 */
const FIRST = 20_000;
const COUNT = 12_000;
let nextOffset = (process.pid * 7919) % COUNT;

/** A port on 127.0.0.1 that nothing listens on, outside the range the kernel hands out on its own. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = FIRST + (nextOffset++ % COUNT);
    if (await isFree(port)) return port;
  }
  throw new Error(`No free port among 100 tried from ${FIRST}-${FIRST + COUNT - 1}.`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}
