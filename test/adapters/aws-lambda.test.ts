import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createLambdaHandler } from '../../adapters/aws-lambda.js';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import {
  answerFor,
  eventFor,
  LAMBDA_SOURCES,
  type LambdaSource,
  lambdaBridge,
} from '../support/lambda-bridge.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { ACCOUNT, CONFORMANCE_PROFILES, createConformanceReceiver, SECRET } from './conformance-receiver.js';

// The platform buffers the whole body before the function runs, so a body still streaming never reaches the
// adapter: the size cases that send part of a body and wait are the platform's (a whole oversized body is
// tested below). Every source runs the default profile; API Gateway REST also runs the alternate one.
for (const source of LAMBDA_SOURCES) {
  runConformanceSuite(
    `aws-lambda behind ${source}`,
    async (profile) => {
      const { receiver, handled } = createConformanceReceiver(profile);
      const server = createServer(lambdaBridge(createLambdaHandler(receiver), source));
      const url = `${await listen(server)}/webhooks/${ACCOUNT}`;
      return { url, handled: async () => handled, close: () => closeServer(server) };
    },
    {
      // API Gateway matches the route `/webhooks/{account}`; Function URLs and load balancers have no routes.
      skip: [
        'payload_too_large_declared',
        'payload_too_large_chunked',
        ...(source === 'rest-api' || source === 'http-api-v2' ? [] : ['route_params']),
        // A load balancer without multi-value headers passes only the last value of a repeated parameter.
        ...(source === 'alb' ? ['query_string_repeated'] : []),
      ],
      ...(source === 'rest-api' ? {} : { profiles: CONFORMANCE_PROFILES.slice(0, 1) }),
    },
  );
}

function signedEvent(
  source: LambdaSource,
  options: { body?: string; headerCase?: (name: string) => string } = {},
) {
  const event = createEvent('message.delivered', { data: { operator: 'opérateur 😀' } });
  const signed = createSignedRequest(options.body ?? event, { secret: SECRET });
  const rename = options.headerCase ?? ((name: string) => name);
  const headers = Object.entries(signed.headers).map(
    ([name, value]) => [rename(name), value] as [string, string],
  );
  const body = Buffer.from(signed.body, 'utf8');
  return {
    event,
    lambdaEvent: eventFor(source, { method: 'POST', path: '/webhooks', query: '', headers, body }),
  };
}

const titleCase = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_all, dash, letter) => dash + letter.toUpperCase());

describe('aws-lambda handler with the documented events', () => {
  it.each(LAMBDA_SOURCES)('answers a signed %s event in the shape its source reads', async (source) => {
    const seen: string[] = [];
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('message.delivered', (event) => {
      seen.push(event.data.message_id);
    });
    const { event, lambdaEvent } = signedEvent(source);
    const result = await createLambdaHandler(receiver)(lambdaEvent);
    expect(seen).toEqual([event.data.message_id]);
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe('{"received":true}');
    expect(result.isBase64Encoded).toBe(false);
    if (source.startsWith('alb')) expect(result.statusDescription).toBe('200 OK');
    else expect(result.statusDescription).toBeUndefined();
    const multi = source === 'rest-api' || source === 'alb-multi-value';
    const contentType = multi
      ? result.multiValueHeaders?.['content-type']?.[0]
      : result.headers?.['content-type'];
    expect(contentType).toBe('application/json');
    expect(multi ? result.headers : result.multiValueHeaders).toBeUndefined();
    const answer = answerFor(source, result);
    expect('refused' in answer ? answer.refused : answer.status).toBe(200);
  });

  it('decodes a base64 body (HTTP API 2.0) byte for byte', async () => {
    const { lambdaEvent } = signedEvent('http-api-v2');
    expect(lambdaEvent.isBase64Encoded).toBe(true);
    const result = await createLambdaHandler(createReceiver({ secrets: SECRET }))(lambdaEvent);
    expect(result.statusCode).toBe(200);
  });

  it('finds mixed-case header names (REST APIs pass them as sent) and repeated values', async () => {
    const { lambdaEvent } = signedEvent('rest-api', { headerCase: titleCase });
    expect(Object.keys(lambdaEvent.headers ?? {})).toContain('Content-Type');
    const handler = createLambdaHandler(createReceiver({ secrets: SECRET }));
    expect((await handler(lambdaEvent)).statusCode).toBe(200);
    // Only headers, no multiValueHeaders (an HTTP API with payload 1.0 may omit them): still found.
    const single = { ...lambdaEvent, multiValueHeaders: null };
    const result = await handler(single);
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['content-type']).toBe('application/json');
  });

  it('answers a whole body over maxBodyBytes 413 in the ALB shape', async () => {
    const receiver = createReceiver({ secrets: SECRET, maxBodyBytes: 1024 });
    const { lambdaEvent } = signedEvent('alb', { body: `{"pad":"${'x'.repeat(2048)}"}` });
    const result = await createLambdaHandler(receiver)(lambdaEvent);
    expect(result.statusCode).toBe(413);
    expect(result.statusDescription).toBe('413 Payload Too Large');
    expect(JSON.parse(result.body).error.code).toBe('payload_too_large');
  });

  it("refuses ack: 'async' at mount, naming the durable handoff", () => {
    const receiver = createReceiver({ secrets: SECRET, ack: 'async' });
    expect(() => createLambdaHandler(receiver)).toThrow(WebhookConfigError);
    expect(() => createLambdaHandler(receiver)).toThrow(/no work runs after the response.*durable handoff/);
  });

  it("answers 500 receiver_misconfigured naming the durable handoff when a factory makes an ack: 'async' receiver", async () => {
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => errors.push(args);
    try {
      const handler = createLambdaHandler(() => createReceiver({ secrets: SECRET, ack: 'async' }));
      const result = await handler(signedEvent('function-url').lambdaEvent);
      expect(result.statusCode).toBe(500);
      const { error } = JSON.parse(result.body);
      expect(error.code).toBe('receiver_misconfigured');
      expect(error.message).toContain('durable handoff');
      expect(errors).toHaveLength(1);
    } finally {
      console.error = original;
    }
  });
});
