import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the suite checks of an answer, whether it came through fetch or node:http. */
export interface Reply {
  status: number;
  headers: { get(name: string): string | null };
  text: string;
}

/** Listens on a free loopback port and returns the base URL (http://127.0.0.1:port). */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes a server now, keep-alive connections included. */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}

/**
 * A POST over node:http with the body written chunk by chunk (chunked transfer encoding unless a
 * Content-Length is given). Stops writing once the answer arrived, as a real client would.
 */
export function rawPost(
  url: string,
  headers: Record<string, string>,
  chunks: Uint8Array[],
  options: { pauseMs?: number; leaveOpen?: boolean } = {},
): Promise<{ reply: Reply; bytesSent: number }> {
  return new Promise((resolve, reject) => {
    let bytesSent = 0;
    let answered = false;
    // A connection of its own: a connection the server closes after a 413 must not be reused by the next case.
    const req = httpRequest(url, { method: 'POST', headers, agent: false });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`No answer from ${url} within 10 s`));
    }, 10_000);
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        const text = Buffer.concat(parts).toString('utf8');
        resolve({
          reply: { status: res.statusCode ?? 0, headers: headerReader(res.headers), text },
          bytesSent,
        });
      });
      res.on('error', reject);
    });
    // Writing into a connection the server closed after answering is expected; only a missing answer fails.
    req.on('error', (error) => {
      if (!answered) {
        clearTimeout(timer);
        reject(error);
      }
    });
    void (async () => {
      for (const chunk of chunks) {
        // Reads that arrived meanwhile run first (I/O before setImmediate): an answer already here stops the
        // writing, rather than a write into the closed connection failing before the answer is read.
        await new Promise((go) => setImmediate(go));
        if (answered || req.destroyed) return;
        bytesSent += chunk.byteLength;
        if (!req.write(chunk)) {
          await new Promise((go) => {
            req.once('drain', go);
            req.once('close', go);
          });
        }
        // A slow client on purpose: the body trickling in is what the test is about, never a wait for a result.
        if (options.pauseMs) await new Promise((go) => setTimeout(go, options.pauseMs));
      }
      // leaveOpen: the rest of a declared body never comes; the answer must not wait for it.
      if (!options.leaveOpen) req.end();
    })();
  });
}

function headerReader(headers: IncomingHttpHeaders): Reply['headers'] {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}
