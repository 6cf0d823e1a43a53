import type { IncomingMessage, ServerResponse } from 'node:http';
import { utf8Text } from '../base/bytes.js';
import { readNodeBody } from '../contract/node-io.js';
import { BODY_TIMEOUT, BODY_TOO_LARGE } from '../contract/request.js';

const MAX_BODY_BYTES = 1024 * 1024;

/** An answer in the service's error shape: `{"error":{"code","message","request_id"}}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: ApiError, requestId: string): void {
  const headers: Record<string, string> = { 'request-id': requestId };
  if (typeof error.extra.retry_after_seconds === 'number') {
    headers['retry-after'] = String(error.extra.retry_after_seconds);
  }
  // A body refused before it was read to its end is not read any further: kept alive, the connection would
  // hold the client's next request behind the rest of an upload nobody reads (as the receiver does).
  if (!res.req.complete) headers.connection = 'close';
  sendJson(
    res,
    error.status,
    { error: { code: error.code, message: error.message, request_id: requestId, ...error.extra } },
    headers,
  );
}

/** The JSON body of a request; every way it can be wrong is an ApiError that says what to send instead. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ApiError(
      415,
      'unsupported_media_type',
      `Send the body as JSON with Content-Type: application/json (got ${type || 'none'}).`,
    );
  }
  const body = await readNodeBody(req, MAX_BODY_BYTES, BODY_TIMEOUT_MS);
  if (body === BODY_TOO_LARGE) throw tooLarge();
  if (body === BODY_TIMEOUT) {
    throw new ApiError(
      408,
      'body_timeout',
      `The body did not arrive within ${BODY_TIMEOUT_MS} ms: send it at once.`,
    );
  }
  if (!(body instanceof Uint8Array)) {
    throw new ApiError(400, 'invalid_body', 'The body ended at another length than its Content-Length said.');
  }
  try {
    return JSON.parse(utf8Text(body));
  } catch {
    throw new ApiError(400, 'invalid_json', 'The body is not valid JSON.');
  }
}

/** How long the emulator's API waits for a request body. */
const BODY_TIMEOUT_MS = 10_000;

const tooLarge = () =>
  new ApiError(413, 'payload_too_large', `The body is over ${MAX_BODY_BYTES} bytes: send a smaller one.`);
