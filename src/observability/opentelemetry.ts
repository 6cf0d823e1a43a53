// messaging-webhooks/opentelemetry: the tracing port on @opentelemetry/api, an optional peer. The entry loads
// without it (an app may import it and turn tracing on only where the package is installed); openTelemetry()
// then says what to install.
import type * as Api from '@opentelemetry/api';
import type { Context, Span, TextMapPropagator, Tracer, TracerProvider } from '@opentelemetry/api';
import { WebhookConfigError } from '../base/errors.js';
import type { HeaderSource } from '../contract/request.js';
import type {
  DeliveryStart,
  TraceAttributes,
  TraceCarrier,
  TraceSpan,
  Tracing,
} from '../contract/tracing.js';
import { formatTraceParent, headerGetter, parseTraceParent, requestAttributes } from './trace-context.js';

const api: typeof Api | undefined = await import('@opentelemetry/api').then(
  // Node names the CommonJS build's exports; a bundler may only give its `default`.
  (module) => (module.trace ? module : (module as unknown as { default: typeof Api }).default),
  (error: { code?: string }) => {
    if (error?.code === 'ERR_MODULE_NOT_FOUND' || error?.code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  },
);

/** Which tracer and propagator openTelemetry() uses; each has a default that suits an app with the SDK set up. */
export interface OpenTelemetryOptions {
  /** The tracer the spans are started on. Default: one named `messaging-webhooks` from `tracerProvider`. */
  tracer?: Tracer;
  /** Where the default tracer comes from. Default: the global one (whatever the app registers, even later). */
  tracerProvider?: TracerProvider;
  /**
   * How a trace context is read from a request and written into a job. Default: the global propagator when
   * the app registered one, else W3C Trace Context (`traceparent`, `tracestate`).
   */
  propagator?: TextMapPropagator;
}

const SCOPE = 'messaging-webhooks';
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/**
 * Tracing on OpenTelemetry, for the receiver's and the workers' `tracing` option: a SERVER span per delivery
 * (a child of the `traceparent` it came with), `verify`, `claim` and `handler` spans under it (the handler span
 * is active while handlers run: their own spans nest under it), a PRODUCER `handoff` span in durable mode, and
 * a CONSUMER span per attempt of a job in the same trace, linked to the job's earlier attempts. With no tracer
 * provider registered every span is a no-op and a delivery costs little more than without tracing.
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): Tracing {
  if (api === undefined) {
    throw new WebhookConfigError(
      'openTelemetry() needs the @opentelemetry/api package: npm install @opentelemetry/api (and an SDK to export the spans, see docs/tracing.md).',
    );
  }
  const otel = api;
  const tracer = options.tracer ?? (options.tracerProvider ?? otel.trace).getTracer(SCOPE);
  const spans: Spans = { otel, tracer, ...propagationOf(otel, options.propagator) };
  const unregistered = options.tracer || options.tracerProvider ? () => false : noGlobalProvider(otel);
  return {
    startDelivery(request) {
      if (unregistered()) return undefined;
      const span = startDelivery(spans, request);
      if (!span.isRecording()) {
        // No provider (or not sampled): a span that carries no context is of no use to anyone, and skipping it
        // spares the walk every stage's span; one that does is kept for its context alone.
        return otel.isSpanContextValid(span.spanContext()) ? new UnsampledSpan(span, spans) : undefined;
      }
      // Read only for a span that records: a header lookup per attribute.
      span.setAttributes(requestAttributes(request.url, request.headers));
      return new OtelSpan(span, spans);
    },
    startJob({ name, parent, links, attributes }) {
      const active = otel.context.active();
      const linked: Api.Link[] = [];
      for (const earlier of links) {
        const context = otel.trace.getSpanContext(spans.extract(active, earlier));
        if (context) linked.push({ context });
      }
      const kind = otel.SpanKind.CONSUMER;
      const parentContext = parent ? spans.extract(active, parent) : active;
      const span = tracer.startSpan(name, { kind, attributes, links: linked }, parentContext);
      return span.isRecording() ? new OtelSpan(span, spans) : new UnsampledSpan(span, spans);
    },
  };
}

/**
 * Whether no global tracer provider is registered yet (checked per delivery: one may be registered later). The
 * global provider is a proxy whose delegate is the API's no-op provider until then; a proxy of another copy of
 * the API answers false, and its spans are started as usual.
 */
function noGlobalProvider(otel: typeof Api): () => boolean {
  const noop = new otel.ProxyTracerProvider().getDelegate();
  return () => {
    const global = otel.trace.getTracerProvider() as Partial<Api.ProxyTracerProvider>;
    return typeof global.getDelegate === 'function' && global.getDelegate() === noop;
  };
}

/** What every span of one openTelemetry() needs: the API, its tracer, how a context is read and written. */
interface Spans extends Propagation {
  otel: typeof Api;
  tracer: Tracer;
}

interface Propagation {
  extract(base: Context, carrier: HeaderSource | TraceCarrier): Context;
  inject(span: Span): TraceCarrier;
}

/** The propagator is chosen at each use: the app may register its own after creating the receiver. */
function propagationOf(otel: typeof Api, own: TextMapPropagator | undefined): Propagation {
  const propagator = (): TextMapPropagator | undefined =>
    own ?? (otel.propagation.fields().length > 0 ? otel.propagation : undefined);
  return {
    extract(base, carrier) {
      const chosen = propagator();
      if (chosen) return chosen.extract(base, carrier, headerGetter);
      const traceparent = headerGetter.get(carrier, 'traceparent');
      if (traceparent === undefined) return base;
      const parent = parseTraceParent(traceparent, headerGetter.get(carrier, 'tracestate'));
      if (!parent) return base;
      const { traceState, ...ids } = parent;
      return otel.trace.setSpanContext(base, {
        ...ids,
        isRemote: true,
        ...(traceState ? { traceState: otel.createTraceState(traceState) } : {}),
      });
    },
    inject(span) {
      const carrier: TraceCarrier = {};
      const chosen = propagator();
      if (chosen) {
        chosen.inject(otel.trace.setSpan(otel.context.active(), span), carrier, otel.defaultTextMapSetter);
        return carrier;
      }
      const { traceId, spanId, traceFlags, traceState } = span.spanContext();
      return formatTraceParent(traceId, spanId, traceFlags, traceState?.serialize());
    },
  };
}

/**
 * A delivery's span, named as the HTTP server conventions say (`POST /webhooks` with a route, else `POST`). When
 * an HTTP instrumentation already started the server span (and read the traceparent), this one is an INTERNAL
 * span under it rather than a second server span.
 */
function startDelivery({ otel, tracer, extract }: Spans, { method, headers, route }: DeliveryStart): Span {
  const upper = METHODS.has(method) ? method : method.toUpperCase();
  const known = METHODS.has(upper) ? upper : undefined;
  const active = otel.context.active();
  const outer = otel.trace.getSpan(active)?.spanContext();
  const nested = outer !== undefined && otel.isSpanContextValid(outer);
  const named = known ?? 'HTTP';
  return tracer.startSpan(
    route ? `${named} ${route}` : named,
    {
      kind: nested ? otel.SpanKind.INTERNAL : otel.SpanKind.SERVER,
      attributes: {
        'http.request.method': known ?? '_OTHER',
        'http.request.method_original': known === method ? undefined : method,
        'http.route': route,
      },
    },
    nested ? active : extract(active, headers),
  );
}

class OtelSpan implements TraceSpan {
  constructor(
    readonly span: Span,
    readonly spans: Spans,
  ) {}

  setAttributes(attributes: TraceAttributes): void {
    this.span.setAttributes(attributes);
  }

  child(name: string, kind: 'internal' | 'producer' = 'internal'): TraceSpan {
    const { otel, tracer } = this.spans;
    const parent = otel.trace.setSpan(otel.context.active(), this.span);
    const spanKind = kind === 'producer' ? otel.SpanKind.PRODUCER : otel.SpanKind.INTERNAL;
    return new OtelSpan(tracer.startSpan(name, { kind: spanKind }, parent), this.spans);
  }

  inContext<T>(fn: () => T): T {
    const { otel } = this.spans;
    return otel.context.with(otel.trace.setSpan(otel.context.active(), this.span), fn);
  }

  carrier(): TraceCarrier {
    return this.spans.inject(this.span);
  }

  fail(description: string, error?: unknown): void {
    if (error !== undefined) this.span.recordException(exceptionOf(error));
    this.span.setStatus({ code: this.spans.otel.SpanStatusCode.ERROR, message: description });
  }

  end(): void {
    this.span.end();
  }
}

/**
 * A span the sampler dropped: it records nothing, so it takes no attribute and starts no span under it (a
 * sampler that follows its parent would drop those too, each at the cost of a new span). It still carries its
 * trace context: active while the walk and the handlers run, so the spans they start (a handler's own, an
 * instrumented store client's) continue its trace unsampled, and written into a durable job. Its stages get one
 * stand-in that ends nothing.
 */
class UnsampledSpan implements TraceSpan {
  readonly recording = false;
  #base: Context | undefined;
  #context: Context | undefined;
  #stage: TraceSpan | undefined;

  constructor(
    readonly span: Span,
    readonly spans: Spans,
  ) {}

  setAttributes(): void {}

  child(): TraceSpan {
    this.#stage ??= new UnsampledStage(this);
    return this.#stage;
  }

  /**
   * Made active in the context it was first asked in (the delivery's), so a handler runs in its delivery's
   * context even when the executor starts it from another's. Where that context is active already, or holds an
   * unsampled span of the same trace (an HTTP instrumentation's server span), `fn` runs as it is: a span started
   * there continues the same trace, unsampled, as it would under this one.
   */
  inContext<T>(fn: () => T): T {
    const { otel } = this.spans;
    const active = otel.context.active();
    this.#base ??= active;
    if (active === this.#context || (active === this.#base && this.#continued(active))) return fn();
    this.#context ??= otel.trace.setSpan(this.#base, this.span);
    return otel.context.with(this.#context, fn);
  }

  #continued(active: Context): boolean {
    const outer = this.spans.otel.trace.getSpanContext(active);
    if (outer === undefined) return false;
    const own = this.span.spanContext();
    return (
      outer.traceId === own.traceId &&
      (outer.traceFlags & this.spans.otel.TraceFlags.SAMPLED) === 0 &&
      outer.traceState === own.traceState
    );
  }

  carrier(): TraceCarrier {
    return this.spans.inject(this.span);
  }

  fail(): void {}

  end(): void {
    this.span.end();
  }
}

/** A stage of an unsampled span: its context, and nothing to record or end. */
class UnsampledStage implements TraceSpan {
  readonly recording = false;
  constructor(readonly of: UnsampledSpan) {}

  setAttributes(): void {}

  child(): TraceSpan {
    return this;
  }

  inContext<T>(fn: () => T): T {
    return this.of.inContext(fn);
  }

  carrier(): TraceCarrier {
    return this.of.carrier();
  }

  fail(): void {}

  end(): void {}
}

/** What recordException takes: an Error as it is, anything else as text. */
function exceptionOf(error: unknown): Api.Exception {
  if (error instanceof Error) return error;
  return { name: typeof error, message: String(error) };
}
