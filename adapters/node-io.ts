import type { IncomingMessage, ServerResponse } from 'node:http';
import { BODY_TOO_LARGE, type Outcome, type ReceiveRequest } from '../src/index.js';
import type { AnyReceiver } from './any-receiver.js';

/** Where the body comes from: bytes already in hand, or the stream, plus the framework's fix for a parsed body. */
export type NodeBodySource = Pick<ReceiveRequest, 'rawBody' | 'readBody' | 'rawBodyHint'>;

/**
 * Runs one Node request through the receiver and writes the outcome: the whole job of the node:http,
 * Express and Next.js Pages adapters, which differ only in where the body comes from.
 */
export async function receiveNodeRequest(
  receiver: AnyReceiver,
  req: IncomingMessage,
  res: ServerResponse,
  body: NodeBodySource = { readBody: (maxBytes) => readNodeBody(req, maxBytes) },
): Promise<void> {
  const outcome = await receiver.receive({ method: req.method ?? 'GET', headers: req.headers, ...body });
  writeNodeOutcome(res, outcome);
}

/**
 * Reads a Node request body as it streams in and stops once it passes `maxBytes`: an oversized body is never
 * buffered whole. A Content-Length over the limit is refused before a byte is read.
 * A stream something else already read to its end resolves to undefined at once (never waits for an `end`
 * that was already emitted): the core answers body_already_parsed.
 */
export function readNodeBody(
  req: IncomingMessage,
  maxBytes: number,
): Promise<Uint8Array | typeof BODY_TOO_LARGE | undefined> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) return Promise.resolve(BODY_TOO_LARGE);
  if (req.readableEnded) return Promise.resolve(undefined);
  if (req.destroyed) return Promise.reject(new Error('The request stream was destroyed before it was read.'));
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
        // Stop buffering; Node discards the rest once the response is written, and the connection is closed.
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
