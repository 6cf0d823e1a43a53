import { Buffer } from 'node:buffer';
import { STATUS_CODES } from 'node:http';
import {
  createAdapter,
  type HeaderSource,
  hostedHeaders,
  type Outcome,
  type ReceiverSource,
} from '../src/adapter.js';

/**
 * The HTTP events Lambda gets, written out (no @types/aws-lambda needed): API Gateway REST APIs and HTTP APIs
 * with payload format 1.0 (`httpMethod`, `headers` and `multiValueHeaders`), HTTP APIs with 2.0 and Function
 * URLs (`requestContext.http.method`, `rawPath`; repeated headers joined with commas), and Application Load
 * Balancer targets (`requestContext.elb`; `multiValueHeaders` instead of `headers` when the target group has
 * multi-value headers on). Only what the receiver reads is named.
 */
export interface LambdaHttpEvent {
  version?: string;
  httpMethod?: string;
  path?: string;
  resource?: string;
  rawPath?: string;
  rawQueryString?: string;
  /**
   * API Gateway REST (payload 1.0): the query's parameters, decoded, the last value of a repeated one; ALB: as
   * sent (percent-encoded). Null or absent without a query.
   */
  queryStringParameters?: Readonly<Record<string, string | undefined>> | null;
  /** Every value of each query parameter, in order: REST APIs always, ALBs with multi-value headers on. */
  multiValueQueryStringParameters?: Readonly<Record<string, readonly string[] | undefined>> | null;
  headers?: Readonly<Record<string, string | undefined>> | null;
  multiValueHeaders?: Readonly<Record<string, readonly string[] | undefined>> | null;
  body?: string | null;
  isBase64Encoded?: boolean;
  /** API Gateway: the route's parameters (`/webhooks/{account}`); null or absent without any. */
  pathParameters?: Readonly<Record<string, string | undefined>> | null;
  requestContext?: {
    http?: { method?: string };
    elb?: { targetGroupArn?: string };
  };
}

/**
 * What the handler returns, in the shape its event's source reads: `statusDescription` for an Application Load
 * Balancer, `multiValueHeaders` when the event came with them (an ALB with multi-value headers on reads only
 * those), `headers` otherwise.
 */
export interface LambdaHttpResult {
  statusCode: number;
  statusDescription?: string;
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  body: string;
  isBase64Encoded: boolean;
}

export type LambdaHttpHandler = (event: LambdaHttpEvent, context?: unknown) => Promise<LambdaHttpResult>;

const ASYNC_REFUSED =
  "messaging-webhooks/aws-lambda cannot acknowledge early (ack: 'async'): Lambda freezes the function once the " +
  'handler returns, so no work runs after the response. Hand verified events to workers with the durable ' +
  "handoff (createReceiver({ queue }) with messaging-webhooks/bullmq or /pg-boss), or keep the default ack: 'sync'.";

/**
 * A Lambda handler for API Gateway (REST and HTTP APIs, payload 1.0 and 2.0), Function URLs and Application
 * Load Balancers: `export const handler = createLambdaHandler(webhooks)`. Give it the receiver, or a function
 * that creates it at the first request. The platform buffers the whole body before the function runs; the
 * receiver still refuses one over its `maxBodyBytes` (413).
 */
export function createLambdaHandler(source: ReceiverSource): LambdaHttpHandler {
  return createAdapter<[LambdaHttpEvent, unknown?], LambdaHttpResult>(source, {
    name: 'messaging-webhooks/aws-lambda',
    usage: 'export const handler = createLambdaHandler(receiver)',
    refuse: (receiver) => (receiver.limits?.ack === 'async' ? ASYNC_REFUSED : undefined),
    read: (event) => ({
      method: event.requestContext?.http?.method ?? event.httpMethod ?? 'GET',
      headers: headersOf(event),
      url: urlOf(event),
      ...(event.resource ? { route: event.resource } : {}),
      ...(event.pathParameters ? { params: event.pathParameters } : {}),
      rawBody: bodyOf(event),
    }),
    write: (outcome, event) => resultFor(event, outcome),
  });
}

/** Every value of a repeated header when the event has them (case as sent: the core looks names up in any case). */
function headersOf(event: LambdaHttpEvent): HeaderSource {
  const multi = event.multiValueHeaders;
  if (multi && Object.keys(multi).length > 0) return multi;
  return (event.headers ?? {}) as Readonly<Record<string, string | undefined>>;
}

/**
 * The request target with its query. HTTP API 2.0 and Function URLs give the query as sent; REST APIs and ALBs
 * give it as parameters, rebuilt here in the order they came: ALBs pass names and values as sent, REST APIs
 * decoded (encoded again). The multi-value form is preferred: it keeps every value of a repeated parameter.
 */
function urlOf(event: LambdaHttpEvent): string | undefined {
  if (event.rawPath !== undefined) {
    return event.rawQueryString ? `${event.rawPath}?${event.rawQueryString}` : event.rawPath;
  }
  const query = queryOf(event);
  return query && event.path !== undefined ? `${event.path}?${query}` : event.path;
}

function queryOf(event: LambdaHttpEvent): string {
  const encode = event.requestContext?.elb ? (part: string) => part : encodeURIComponent;
  const parts: string[] = [];
  const multi = event.multiValueQueryStringParameters;
  const single = event.queryStringParameters;
  if (multi && Object.keys(multi).length > 0) {
    for (const name in multi) {
      for (const value of multi[name] ?? []) parts.push(`${encode(name)}=${encode(value)}`);
    }
  } else if (single) {
    for (const name in single) {
      const value = single[name];
      if (value !== undefined) parts.push(`${encode(name)}=${encode(value)}`);
    }
  }
  return parts.join('&');
}

/** The body's bytes: decoded from base64 when the platform encoded them, else the text it passed. */
function bodyOf(event: LambdaHttpEvent): Uint8Array | string {
  const body = event.body ?? '';
  if (!event.isBase64Encoded) return body;
  const bytes = Buffer.from(body, 'base64');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The outcome as the event's source reads it. The platform owns the connection and frames the body itself, so
 * `connection` and `content-length` are left to it.
 */
function resultFor(event: LambdaHttpEvent, outcome: Outcome): LambdaHttpResult {
  const headers = hostedHeaders(outcome);
  const result: LambdaHttpResult = { statusCode: outcome.status, body: outcome.body, isBase64Encoded: false };
  if (event.requestContext?.elb) {
    result.statusDescription = `${outcome.status} ${STATUS_CODES[outcome.status] ?? ''}`.trimEnd();
  }
  if (event.multiValueHeaders) {
    result.multiValueHeaders = {};
    for (const name in headers) result.multiValueHeaders[name] = [headers[name] as string];
  } else {
    result.headers = headers;
  }
  return result;
}
