import {
  createAdapter,
  hostedHeaders,
  type ReceiverSource,
  type WebBodySource,
  webRequest,
} from '../src/adapter.js';

const AZURE_FIX =
  'The HttpRequest body was read (request.json(), request.text(), …) before the webhook handler: pass it the ' +
  'untouched request, or request.clone() if something else must read it too.';

/** The parts of Azure Functions' `HttpRequest` (v4 programming model) the handler reads. */
export interface AzureHttpRequestLike extends WebBodySource {
  readonly method: string;
  readonly url: string;
  /** The route's parameters (`route: 'webhooks/{account}'` in app.http's options). */
  readonly params?: Readonly<Record<string, string | undefined>>;
}

/** What the handler returns: an `HttpResponseInit`. */
export interface AzureHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type AzureHttpHandler = (
  request: AzureHttpRequestLike,
  context?: unknown,
) => Promise<AzureHttpResponse>;

/**
 * An Azure Functions v4 HTTP handler: `app.http('webhooks', { methods: ['POST'], authLevel: 'anonymous',
 * handler: createAzureHandler(webhooks) })`. Give it the receiver, or a function that creates it at the first
 * request. Reads the body as it streams in (the host buffers it unless HTTP streaming is on), under the
 * receiver's `maxBodyBytes` and body deadline.
 */
export function createAzureHandler(source: ReceiverSource): AzureHttpHandler {
  return createAdapter<[AzureHttpRequestLike, unknown?], AzureHttpResponse>(source, {
    name: 'messaging-webhooks/azure-functions',
    usage: "app.http('webhooks', { handler: createAzureHandler(receiver) })",
    read: (request) =>
      webRequest(request, AZURE_FIX, request.params ? { params: request.params } : undefined),
    // The host owns the connection and sizes the body itself.
    write: (outcome) => ({ status: outcome.status, headers: hostedHeaders(outcome), body: outcome.body }),
  });
}
