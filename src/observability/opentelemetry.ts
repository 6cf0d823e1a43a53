// messaging-webhooks/opentelemetry: the tracing port on @opentelemetry/api, an optional peer. The entry loads
// without it (an app may import it and turn tracing on only where the package is installed); openTelemetry()
// then says what to install.
import type * as Api from '@opentelemetry/api';
import type { Context, Span, TextMapPropagator, Tracer, TracerProvider } from '@opentelemetry/api';
import { WebhookConfigError } from '../base/errors.js';
import type { HeaderSource } from '../contract/request.js';
import type {
  DeliveryStart,
  JobStart,
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
  const { SpanKind, SpanStatusCode } = otel;

  /** The propagator chosen per use: the app may register its own after creating the receiver. */
  const propagator = (): TextMapPropagator | undefined =>
    options.propagator ?? (otel.propagation.fields().length > 0 ? otel.propagation : undefined);

  function extract(base: Context, carrier: HeaderSource | TraceCarrier): Context {
    const chosen = propagator();
    if (chosen) return chosen.extract(base, carrier, headerGetter);
    const parent = parseTraceParent(
      headerGetter.get(carrier, 'traceparent'),
      headerGetter.get(carrier, 'tracestate'),
    );
    if (!parent) return base;
    const { traceState, ...ids } = parent;
    return otel.trace.setSpanContext(base, {
      ...ids,
      isRemote: true,
      ...(traceState ? { traceState: otel.createTraceState(traceState) } : {}),
    });
  }

  function inject(span: Span): TraceCarrier {
    const carrier: TraceCarrier = {};
    const chosen = propagator();
    if (chosen) {
      chosen.inject(otel.trace.setSpan(otel.context.active(), span), carrier, otel.defaultTextMapSetter);
      return carrier;
    }
    const { traceId, spanId, traceFlags, traceState } = span.spanContext();
    return formatTraceParent(traceId, spanId, traceFlags, traceState?.serialize());
  }

  class OtelSpan implements TraceSpan {
    constructor(readonly span: Span) {}
    setAttributes(attributes: TraceAttributes): void {
      this.span.setAttributes(attributes);
    }
    child(name: string, kind: 'internal' | 'producer' = 'internal'): TraceSpan {
      const parent = otel.trace.setSpan(otel.context.active(), this.span);
      const spanKind = kind === 'producer' ? SpanKind.PRODUCER : SpanKind.INTERNAL;
      return new OtelSpan(tracer.startSpan(name, { kind: spanKind }, parent));
    }
    inContext<T>(fn: () => T): T {
      return otel.context.with(otel.trace.setSpan(otel.context.active(), this.span), fn);
    }
    carrier(): TraceCarrier {
      return inject(this.span);
    }
    fail(description: string, error?: unknown): void {
      if (error !== undefined) this.span.recordException(exceptionOf(error));
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: description });
    }
    end(): void {
      this.span.end();
    }
  }

  return {
    startDelivery({ method, headers, url, route }: DeliveryStart): TraceSpan {
      const known = METHODS.has(method)
        ? method
        : METHODS.has(method.toUpperCase())
          ? method.toUpperCase()
          : undefined;
      const active = otel.context.active();
      // An HTTP instrumentation already made the server span (and read the traceparent): this one goes under it.
      const nested = otel.trace.getSpan(active)?.spanContext();
      const inServer = nested !== undefined && otel.isSpanContextValid(nested);
      const span = tracer.startSpan(
        route ? `${known ?? 'HTTP'} ${route}` : (known ?? 'HTTP'),
        {
          kind: inServer ? SpanKind.INTERNAL : SpanKind.SERVER,
          attributes: {
            'http.request.method': known ?? '_OTHER',
            'http.request.method_original': known === method ? undefined : method,
            'http.route': route,
            ...requestAttributes(url, headers),
          },
        },
        inServer ? active : extract(active, headers),
      );
      return new OtelSpan(span);
    },
    startJob({ name, parent, links, attributes }: JobStart): TraceSpan {
      const active = otel.context.active();
      const linked = [];
      for (const earlier of links) {
        const context = otel.trace.getSpanContext(extract(active, earlier));
        if (context) linked.push({ context });
      }
      const span = tracer.startSpan(
        name,
        { kind: SpanKind.CONSUMER, attributes, links: linked },
        parent ? extract(active, parent) : active,
      );
      return new OtelSpan(span);
    },
  };
}

/** What recordException takes: an Error as it is, anything else as text. */
function exceptionOf(error: unknown): Api.Exception {
  if (error instanceof Error) return error;
  return { name: typeof error, message: String(error) };
}
