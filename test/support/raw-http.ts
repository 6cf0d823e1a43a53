import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  /** Status codes of every complete answer read, in order (pipelined requests get several). */
  statuses: number[];
  /** Reason codes from the JSON error bodies, in order ('' for an answer without one). */
  reasons: string[];
  /** The header block of each complete answer (status line included), in order. */
  heads: string[];
  /** The server closed the connection. Only waited for with `untilClose`. */
  closed: boolean;
}

export interface ExchangeOptions {
  /** Complete answers to wait for (default 1). */
  answers?: number;
  /** Then wait for the server to close the connection too (a failure after timeoutMs if it does not). */
  untilClose?: boolean;
  /** Close the connection ourselves once everything is written, without reading. */
  abortAfterWrite?: boolean;
  /** Answers to HEAD: headers only, whatever their Content-Length says. */
  headersOnly?: boolean;
  timeoutMs?: number;
}

/**
 * Writes `parts` to a fresh connection to 127.0.0.1:`port`, in order, and reads the answers: for what an HTTP
 * client library will not send (lying lengths, garbage, pipelining, half-sent bodies).
 */
export function rawExchange(port: number, parts: (string | Uint8Array)[], options: ExchangeOptions = {}) {
  const wanted = options.answers ?? 1;
  return new Promise<RawAnswer>((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let bytes = Buffer.alloc(0);
    let closed = false;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseAnswers(bytes, options.headersOnly), closed });
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 5000);
    const check = () => {
      if (
        parseAnswers(bytes, options.headersOnly).statuses.length >= wanted &&
        (!options.untilClose || closed)
      )
        finish();
    };
    socket.on('data', (chunk) => {
      bytes = Buffer.concat([bytes, chunk]);
      check();
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('end', () => {
      closed = true;
      check();
    });
    socket.on('error', () => {});
    socket.on('connect', async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        if (!socket.write(part)) await new Promise((drained) => socket.once('drain', drained));
      }
      if (options.abortAfterWrite) {
        closed = true;
        finish();
      }
    });
  });
}

/** Complete answers only: headers, then a body of content-length bytes, or a chunked body to its last chunk. */
function parseAnswers(bytes: Buffer, headersOnly = false): Omit<RawAnswer, 'closed'> {
  const statuses: number[] = [];
  const reasons: string[] = [];
  const heads: string[] = [];
  let at = 0;
  for (;;) {
    const headEnd = bytes.indexOf('\r\n\r\n', at);
    if (headEnd === -1) break;
    const head = bytes.subarray(at, headEnd).toString('latin1');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(head);
    if (!status) break;
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    let body: string;
    if (headersOnly) {
      body = '';
      at = headEnd + 4;
    } else if (length) {
      const end = headEnd + 4 + Number(length[1]);
      if (bytes.length < end) break;
      body = bytes.subarray(headEnd + 4, end).toString('utf8');
      at = end;
    } else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      const end = bytes.indexOf('\r\n0\r\n\r\n', headEnd);
      if (end === -1) break;
      body = bytes.subarray(headEnd + 4, end).toString('utf8');
      at = end + 7;
    } else {
      body = bytes.subarray(headEnd + 4).toString('utf8');
      at = bytes.length;
    }
    statuses.push(Number(status[1]));
    reasons.push(/"code":"([a-z_]+)"/.exec(body)?.[1] ?? '');
    heads.push(head);
  }
  return { statuses, reasons, heads };
}
