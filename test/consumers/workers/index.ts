// A Cloudflare Worker's project: no Node types at all (types: []), the Web platform's lib only.
import { createReceiver, type Receiver } from 'messaging-webhooks';
import { createLambdaHandler } from 'messaging-webhooks/aws-lambda';
import { createAzureHandler } from 'messaging-webhooks/azure-functions';
import { DedupeDurableObject, DurableObjectDedupeStore } from 'messaging-webhooks/cloudflare';
import { createFetchHandler, type FetchHandlerContext } from 'messaging-webhooks/fetch';

export { DedupeDurableObject };

/** The shapes of @cloudflare/workers-types' DurableObjectNamespace binding, as far as a Worker's env shows. */
interface DurableObjectId {
  toString(): string;
  equals(other: DurableObjectId): boolean;
}
interface DurableObjectStub {
  readonly id: DurableObjectId;
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
}
interface DurableObjectNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId, options?: { locationHint?: string }): DurableObjectStub;
}

interface Env {
  WEBHOOK_SECRET: string;
  WEBHOOK_DEDUPE: DurableObjectNamespace;
}

let receiver: Receiver | undefined;

export default {
  fetch(request: Request, env: Env, ctx: FetchHandlerContext): Promise<Response> {
    const handle = createFetchHandler(() => {
      receiver ??= createReceiver({
        secrets: env.WEBHOOK_SECRET,
        store: new DurableObjectDedupeStore({ namespace: env.WEBHOOK_DEDUPE }),
      });
      receiver.on('message.failed', (event) => void event.data.message_id);
      return receiver;
    });
    return handle(request, ctx);
  },
};

// The serverless entries' types need no Node types either.
export const lambda = createLambdaHandler(() => createReceiver({ secrets: 'whsec_consumer_workers' }));
export const azure = createAzureHandler(() => createReceiver({ secrets: 'whsec_consumer_workers' }));
