import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { LambdaHttpEvent, LambdaHttpHandler, LambdaHttpResult } from '../../adapters/aws-lambda.js';
import { root } from './build.js';

/** The HTTP sources of Lambda events, each with its documented event in test/fixtures/aws-lambda/. */
export const LAMBDA_SOURCES = ['rest-api', 'http-api-v2', 'function-url', 'alb', 'alb-multi-value'] as const;
export type LambdaSource = (typeof LAMBDA_SOURCES)[number];

/** The documented event of a source, as AWS's guides show it (a fresh copy each time). */
export function lambdaFixture(source: LambdaSource): LambdaHttpEvent & Record<string, unknown> {
  return JSON.parse(readFileSync(join(root, 'test/fixtures/aws-lambda', `${source}.json`), 'utf8'));
}

interface HttpRequest {
  method: string;
  path: string;
  query: string;
  /** Name as sent, value, in order: repeats stay apart. */
  headers: Array<[string, string]>;
  body: Buffer;
}

/**
 * The event `source` would send for `request`: the fixture with the request's method, path, headers and body
 * put in as that source does it (REST: names as sent, one value each plus every value in multiValueHeaders;
 * HTTP API 2.0 and Function URLs: lower-case names, repeats joined with commas, cookies apart; ALB: lower-case
 * names, the last value, or every value when multi-value headers are on). The body is base64 when the fixture's is.
 */
export function eventFor(source: LambdaSource, request: HttpRequest): LambdaHttpEvent {
  const event = lambdaFixture(source);
  const base64 = event.isBase64Encoded === true;
  const body = base64 ? request.body.toString('base64') : request.body.toString('utf8');
  const lower = request.headers.map(([name, value]) => [name.toLowerCase(), value] as [string, string]);
  if (source === 'rest-api') {
    event.headers = Object.fromEntries(request.headers);
    event.multiValueHeaders = group(request.headers);
    Object.assign(event, {
      httpMethod: request.method,
      path: request.path,
      body: request.body.length ? body : null,
    });
    Object.assign(event.requestContext as object, { httpMethod: request.method });
    Object.assign(event, queryParameters(request.query, decodeURIComponent, 'both'));
    const account = accountIn(request.path);
    if (account !== undefined) {
      const resource = '/webhooks/{account}';
      Object.assign(event, { resource, pathParameters: { account } });
      Object.assign(event.requestContext as object, { resourcePath: resource });
    }
  } else if (source === 'http-api-v2' || source === 'function-url') {
    const cookies = lower.filter(([name]) => name === 'cookie').map(([, value]) => value);
    const grouped = group(lower.filter(([name]) => name !== 'cookie'));
    event.headers = Object.fromEntries(
      Object.entries(grouped).map(([name, values]) => [name, values.join(',')]),
    );
    Object.assign(event, { rawPath: request.path, rawQueryString: request.query });
    if (cookies.length > 0) Object.assign(event, { cookies });
    if (request.body.length > 0) event.body = body;
    else delete event.body;
    Object.assign(event.requestContext?.http as object, { method: request.method, path: request.path });
    const account = accountIn(request.path);
    if (source === 'http-api-v2' && account !== undefined) {
      const routeKey = 'ANY /webhooks/{account}';
      Object.assign(event, { routeKey, pathParameters: { account } });
      Object.assign(event.requestContext as object, { routeKey });
    }
  } else {
    if (source === 'alb') event.headers = Object.fromEntries(lower);
    else event.multiValueHeaders = group(lower);
    // A load balancer passes the query's names and values as sent, still percent-encoded.
    const form = source === 'alb' ? 'single' : 'multi';
    Object.assign(
      event,
      queryParameters(request.query, (part) => part, form),
    );
    Object.assign(event, {
      httpMethod: request.method,
      path: request.path,
      body: request.body.length ? body : '',
    });
  }
  return event;
}

/**
 * API Gateway's route `/webhooks/{account}`: the account a path matches, as API Gateway passes it (decoded).
 * Function URLs and load balancers have no routes of their own.
 */
function accountIn(path: string): string | undefined {
  const match = /^\/webhooks\/([^/]+)$/.exec(path);
  return match ? decodeURIComponent(match[1] as string) : undefined;
}

/**
 * The query as REST APIs and ALBs pass it: `queryStringParameters` (the last value of a repeated name) and
 * `multiValueQueryStringParameters` (every value, in order), each part through `decode`. REST APIs pass null for
 * both without a query.
 */
function queryParameters(
  query: string,
  decode: (part: string) => string,
  form: 'single' | 'multi' | 'both',
): Record<string, unknown> {
  const pairs = query
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const [name = '', value = ''] = pair.split(/=(.*)/s, 2);
      return [decode(name), decode(value)] as [string, string];
    });
  if (pairs.length === 0)
    return form === 'both' ? { queryStringParameters: null, multiValueQueryStringParameters: null } : {};
  const found: Record<string, unknown> = {};
  if (form !== 'multi') found.queryStringParameters = Object.fromEntries(pairs);
  if (form !== 'single') found.multiValueQueryStringParameters = group(pairs);
  return found;
}

function group(headers: Array<[string, string]>): Record<string, string[]> {
  const grouped: Record<string, string[]> = {};
  for (const [name, value] of headers) {
    grouped[name] = [...(grouped[name] ?? []), value];
  }
  return grouped;
}

/**
 * The answer as `source` reads the function's result, or why it would refuse it (the platform answers 502):
 * an ALB needs `statusDescription`, and with multi-value headers on reads only `multiValueHeaders`; an ALB
 * without reads only `headers`; API Gateway REST merges both.
 */
export function answerFor(
  source: LambdaSource,
  result: LambdaHttpResult,
): { status: number; headers: Record<string, string>; body: Buffer } | { refused: string } {
  if (source.startsWith('alb') && !result.statusDescription?.startsWith(`${result.statusCode} `)) {
    return { refused: `statusDescription ${JSON.stringify(result.statusDescription)}` };
  }
  const headers: Record<string, string> = {};
  const single = source === 'alb-multi-value' ? undefined : result.headers;
  const multi = source === 'alb' ? undefined : result.multiValueHeaders;
  for (const [name, value] of Object.entries(single ?? {})) headers[name.toLowerCase()] = value;
  for (const [name, values] of Object.entries(multi ?? {})) headers[name.toLowerCase()] = values.join(', ');
  const body = Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  return { status: result.statusCode, headers, body };
}

/**
 * Test-only bridge from node:http to a Lambda handler, as the platform runs it: the whole body is read first
 * (API Gateway, Function URLs and ALBs buffer it before invoking), the event built as `source` sends it, and
 * the result written back as `source` reads it, sized.
 */
export function lambdaBridge(handler: LambdaHttpHandler, source: LambdaSource) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const [path, query = ''] = (req.url ?? '/').split('?', 2) as [string, string?];
    const headers: Array<[string, string]> = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      headers.push([req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string]);
    }
    const event = eventFor(source, {
      method: req.method ?? 'GET',
      path,
      query,
      headers,
      body: Buffer.concat(chunks),
    });
    const answer = answerFor(source, await handler(event));
    if ('refused' in answer) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`The platform refused the function's result: ${answer.refused}`);
      return;
    }
    res.writeHead(answer.status, { ...answer.headers, 'content-length': String(answer.body.length) });
    res.end(answer.body);
  };
}
