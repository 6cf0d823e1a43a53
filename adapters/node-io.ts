import type { IncomingMessage, ServerResponse } from 'node:http';
import { BODY_TOO_LARGE, type Outcome } from '../src/index.js';

/**
 * Reads a Node request body as it streams in and stops once it passes `maxBytes`: an oversized body is never
 * buffered whole. A Content-Length over the limit is refused before a byte is read.
 */
export function readNodeBody(
  req: IncomingMessage,
  maxBytes: number,
): Promise<Uint8Array | typeof BODY_TOO_LARGE> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) return Promise.resolve(BODY_TOO_LARGE);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        resolve(BODY_TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      if (req.complete) return;
      cleanup();
      reject(new Error('The client closed the connection before the body was complete.'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** Writes an outcome to a Node response as it is: the core already chose status, headers and body. */
export function writeNodeOutcome(res: ServerResponse, outcome: Outcome): void {
  if (outcome.reason === 'payload_too_large') {
    // The rest of an oversized body is not read: close the connection instead of draining it.
    res.shouldKeepAlive = false;
  }
  res.writeHead(outcome.status, outcome.headers);
  res.end(outcome.body);
}
