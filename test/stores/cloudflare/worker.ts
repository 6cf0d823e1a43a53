// The Worker the Durable Object store's tests run in workerd: it exports DedupeDurableObject, runs the store's
// operations inside the Worker for the test process (/store/<operation>), and serves a receiver on the store
// (/webhooks). The tests load it as two Workers, each its own isolate, bound to the same objects.
import { createFetchHandler, type FetchHandler } from '../../../adapters/fetch.js';
import { createReceiver } from '../../../src/index.js';
import {
  DedupeDurableObject,
  type DedupeObjectNamespace,
  type DedupeObjectState,
  type DedupeObjectStorage,
  DurableObjectDedupeStore,
} from '../../../src/stores/cloudflare.js';
import type { DedupeStore } from '../../../src/stores/types.js';

/** The store's object, plus GET /peek: what its storage holds, for the tests of its retention. */
export class PeekableDedupeObject extends DedupeDurableObject {
  readonly #storage: DedupeObjectStorage;

  constructor(state: DedupeObjectState) {
    super(state);
    this.#storage = state.storage;
  }

  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== '/peek') return super.fetch(request);
    return Response.json({ record: (await this.#storage.get('record')) ?? null });
  }
}

/** A Durable Object that takes every request and never answers: what a store's deadline is for. */
export class SilentObject {
  fetch(): Promise<Response> {
    return new Promise(() => {});
  }
}

interface Env {
  DEDUPE: DedupeObjectNamespace;
  SILENT: DedupeObjectNamespace;
  SECRET: string;
}

let handle: FetchHandler | undefined;
const handled: string[] = [];

async function storeOperation(store: DedupeStore, url: URL): Promise<Response> {
  const key = JSON.parse(url.searchParams.get('key') as string) as string;
  const token = url.searchParams.get('token') as string;
  const ms = Number(url.searchParams.get('ms'));
  try {
    const operation = url.pathname.slice('/store/'.length);
    const result =
      operation === 'claim'
        ? await store.claim(key, ms)
        : operation === 'complete'
          ? await store.complete(key, token, ms)
          : operation === 'renew'
            ? await store.renew(key, token, ms)
            : await store.release(key, token);
    return Response.json({ result });
  } catch (error) {
    return Response.json({ error: { name: (error as Error).name, message: (error as Error).message } });
  }
}

export default {
  fetch(request: Request, env: Env): Promise<Response> | Response {
    const url = new URL(request.url);
    if (url.pathname.startsWith('/store/')) {
      const namespace = url.searchParams.get('object') === 'silent' ? env.SILENT : env.DEDUPE;
      const operationTimeoutMs = Number(url.searchParams.get('timeout') ?? 3000);
      return storeOperation(new DurableObjectDedupeStore({ namespace, operationTimeoutMs }), url);
    }
    if (url.pathname === '/handled') return Response.json(handled);
    if (url.pathname === '/peek') {
      const key = url.searchParams.get('key') as string;
      return env.DEDUPE.get(env.DEDUPE.idFromName(key)).fetch('https://dedupe.object/peek', {
        method: 'GET',
      }) as Promise<Response>;
    }
    handle ??= createFetchHandler(() => {
      const receiver = createReceiver({
        secrets: env.SECRET,
        store: new DurableObjectDedupeStore({ namespace: env.DEDUPE }),
      });
      receiver.on('message.delivered', (event) => {
        handled.push(event.id as string);
      });
      return receiver;
    });
    return handle(request);
  },
};
