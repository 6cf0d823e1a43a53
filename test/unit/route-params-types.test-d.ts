import type { Request as ExpressRequest } from 'express';
import { describe, expectTypeOf, it } from 'vitest';
import type { LambdaHttpEvent } from '../../adapters/aws-lambda.js';
import type { AzureHttpRequestLike } from '../../adapters/azure-functions.js';
import { createFetchHandler, type FetchHandlerContext } from '../../adapters/fetch.js';
import type { KoaContextLike } from '../../adapters/koa.js';
import { createRouteHandler, type NextRouteContext } from '../../adapters/next.js';
import { createNodeHandler, type NodeHandlerOptions } from '../../adapters/node.js';
import type { ReceiveRequest, WebRouteParams } from '../../src/adapter.js';
import { createReceiver } from '../../src/index.js';

type Params = ReceiveRequest['params'];
const receiver = createReceiver({ secrets: 'whsec_x' });

describe("the adapters' route parameters", () => {
  it('the Fetch handler takes params beside waitUntil: an object, or a promise of one', () => {
    const handle = createFetchHandler(receiver);
    expectTypeOf<FetchHandlerContext['params']>().toEqualTypeOf<WebRouteParams | undefined>();
    expectTypeOf<{ params: { account: string } }>().toExtend<FetchHandlerContext>();
    expectTypeOf<{ params: Promise<{ account: string }> }>().toExtend<FetchHandlerContext>();
    // SvelteKit's and React Router's params, with optional members.
    expectTypeOf<{ params: Partial<Record<string, string>> }>().toExtend<FetchHandlerContext>();
    expectTypeOf<{ params: { account: number } }>().not.toExtend<FetchHandlerContext>();
    expectTypeOf(handle).parameter(1).toEqualTypeOf<FetchHandlerContext | undefined>();
  });

  it("Next's route context, a promise of the segments from Next 15 on and an object before", () => {
    expectTypeOf<{ params: Promise<{ account: string }> }>().toExtend<NextRouteContext>();
    expectTypeOf<{ params: { account: string } }>().toExtend<NextRouteContext>();
    expectTypeOf(createRouteHandler(receiver)).parameter(1).toEqualTypeOf<NextRouteContext | undefined>();
  });

  it("node:http's params function, and what the platforms' own request types carry", () => {
    expectTypeOf<NodeHandlerOptions['params']>().toEqualTypeOf<
      ((req: import('node:http').IncomingMessage) => Params) | undefined
    >();
    expectTypeOf(createNodeHandler).parameter(1).toEqualTypeOf<NodeHandlerOptions | undefined>();
    expectTypeOf<LambdaHttpEvent['pathParameters']>().toEqualTypeOf<
      Readonly<Record<string, string | undefined>> | null | undefined
    >();
    expectTypeOf<AzureHttpRequestLike['params']>().toEqualTypeOf<Params>();
    expectTypeOf<KoaContextLike['params']>().toEqualTypeOf<Params>();
    expectTypeOf<ExpressRequest['params']>().toHaveProperty('account');
  });
});
