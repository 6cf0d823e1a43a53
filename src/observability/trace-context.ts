import { getHeader, type HeaderSource } from '../contract/request.js';

/**
 * W3C Trace Context, written and read without a propagator: what openTelemetry() uses when the app registered
 * none (NodeSDK and NodeTracerProvider.register() do register one; a bare BasicTracerProvider does not), so a
 * delivery's `traceparent` is still continued and a durable job still carries its trace.
 */
export interface TraceParent {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState: string | undefined;
}

const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})(-.*)?$/;
const ZEROS = /^0+$/;

/** A `traceparent` (and its `tracestate`) as the specification reads them; undefined when malformed. */
export function parseTraceParent(
  traceparent: string | undefined,
  tracestate: string | undefined,
): TraceParent | undefined {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent.trim());
  if (!match) return undefined;
  const [, version, traceId = '', spanId = '', flags = '', rest] = match;
  // Version ff is invalid; version 00 has exactly four fields; a later version may add fields after them.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (ZEROS.test(traceId) || ZEROS.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), traceState: tracestate };
}

/** The carrier of a span context: `traceparent`, and `tracestate` when there is one. */
export function formatTraceParent(
  traceId: string,
  spanId: string,
  traceFlags: number,
  traceState: string | undefined,
): Record<string, string> {
  const flags = (traceFlags & 0xff).toString(16).padStart(2, '0');
  const carrier: Record<string, string> = { traceparent: `00-${traceId}-${spanId}-${flags}` };
  if (traceState) carrier.tracestate = traceState;
  return carrier;
}

/** Reads any runtime's headers for a propagator: a Fetch `Headers` or Node's header object. */
export const headerGetter = {
  get: (headers: HeaderSource, key: string): string | undefined => getHeader(headers, key),
  keys: (headers: HeaderSource): string[] =>
    typeof (headers as { keys?: unknown }).keys === 'function'
      ? [...(headers as unknown as { keys(): Iterable<string> }).keys()]
      : Object.keys(headers),
};

/**
 * What a delivery's span says of its request, per the HTTP server semantic conventions. Only the path: a query
 * string may carry a token, so it is never recorded.
 */
export function requestAttributes(
  url: string | undefined,
  headers: HeaderSource,
): Record<string, string | number | undefined> {
  const attributes: Record<string, string | number | undefined> = {
    'user_agent.original': getHeader(headers, 'user-agent'),
  };
  let host = getHeader(headers, 'host');
  if (url !== undefined && !url.startsWith('/')) {
    try {
      const parsed = new URL(url);
      attributes['url.path'] = parsed.pathname;
      attributes['url.scheme'] = parsed.protocol.slice(0, -1);
      host = parsed.host;
    } catch {
      // Not a URL after all: the path stays unknown.
    }
  } else if (url !== undefined) {
    const query = url.search(/[?#]/);
    attributes['url.path'] = query === -1 ? url : url.slice(0, query);
  }
  if (host) {
    const port = /:(\d+)$/.exec(host);
    attributes['server.address'] = port ? host.slice(0, port.index) : host;
    if (port) attributes['server.port'] = Number(port[1]);
  }
  return attributes;
}
