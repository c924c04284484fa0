/* eslint-disable @typescript-eslint/no-require-imports -- the SDK is required only when tracing is on (see startTracing) */
import { context, propagation, ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, trace, type Context, type Link } from '@opentelemetry/api';
import type { TracerProvider } from '@opentelemetry/sdk-trace';

/**
 * OpenTelemetry tracing, on only when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. This
 * module is the first thing each process imports (`@gatehouse/runtime/tracing`, before anything that loads `pg` or
 * `ioredis`), because the database and Redis instrumentations patch those modules as they are loaded. It imports
 * nothing of the project.
 *
 * The standard OpenTelemetry environment is honoured through the SDK's own parts: the resource through its
 * environment detectors (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME), the exporter through its own environment
 * configuration (OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, _HEADERS, _TIMEOUT, _COMPRESSION, certificates), the batch
 * processor through OTEL_BSP_*, and the sampler through OTEL_TRACES_SAMPLER(_ARG), mapped onto the SDK's samplers as
 * the specification names them (SDK 3 keeps that mapping inside @opentelemetry/sdk-node, which exports no part of it).
 *
 * Unset, nothing of the SDK is loaded, and every helper below is one boolean test: no span objects, no context
 * switches, no header parsing beyond passing `traceparent` on as it came.
 */

let provider: TracerProvider | undefined;

export function tracingEnabled(): boolean {
  return provider !== undefined;
}

/**
 * Starts exporting spans over OTLP/HTTP (JSON) to `${OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`, or to
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given; a no-op when neither is set, or when OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none. `service` names the process unless OTEL_SERVICE_NAME (or a service.name in
 * OTEL_RESOURCE_ATTRIBUTES) says otherwise; `version` is its service.version.
 */
export function startTracing(service: string, version?: string): void {
  // The SDK's detectors and exporter read process.env themselves: so does everything here.
  const env = process.env;
  const endpoint = (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT)?.trim();
  if (!endpoint || provider) return;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return;
  // A malformed value is reported by the configuration check that follows, with one clear line.
  if (!/^https?:\/\//.test(endpoint)) return;
  const { TracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const resources = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');

  // Later ones win: the SDK's own (telemetry.sdk.*), this process's, then the operator's environment.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': service, ...(version ? { 'service.version': version } : {}) }))
    .merge(resources.detectResources({ detectors: [resources.resourceAttributesEnvDetector, resources.serviceNameEnvDetector] }));
  provider = new TracerProvider({
    resource,
    sampler: samplerFromEnv(env),
    spanProcessors: [
      new BatchSpanProcessor({
        // No url: the exporter reads its endpoint, headers, timeout and compression from the environment itself.
        exporter: new OTLPTraceExporter(),
        scheduledDelayMillis: positive(env.OTEL_BSP_SCHEDULE_DELAY) ?? 5000,
        exportTimeoutMillis: positive(env.OTEL_BSP_EXPORT_TIMEOUT),
        maxQueueSize: positive(env.OTEL_BSP_MAX_QUEUE_SIZE),
        maxExportBatchSize: positive(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE),
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  // Statements only inside a traced operation (a request, a job): not the health checks' or the relay's polling.
  for (const instrumentation of [new PgInstrumentation({ requireParentSpan: true }), new IORedisInstrumentation({ requireParentSpan: true })]) {
    instrumentation.setTracerProvider(provider);
    instrumentation.enable();
  }
}

/**
 * OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (a ratio from 0 to 1, default 1) as the specification defines them;
 * unset: parentbased_always_on, the specification's default. A value the configuration check refuses is not used.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv = process.env): import('@opentelemetry/sdk-trace').Sampler {
  const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } =
    require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = raw && Number.isFinite(Number(raw)) && Number(raw) >= 0 && Number(raw) <= 1 ? Number(raw) : 1;
  switch (env.OTEL_TRACES_SAMPLER?.trim().toLowerCase()) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function positive(raw: string | undefined): number | undefined {
  const value = Number(raw);
  return raw !== undefined && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** Sends the spans still buffered; called on the way out. */
export async function stopTracing(): Promise<void> {
  await provider?.shutdown().catch(() => undefined);
}

function tracer() {
  return trace.getTracer('gatehouse');
}

/** The server span of an incoming request, child of the caller's `traceparent`; undefined when tracing is off. */
export function startServerSpan(method: string, headers: Record<string, string | string[] | undefined>): { span: Span; context: Context } | undefined {
  if (!provider) return undefined;
  const parent = propagation.extract(context.active(), headers);
  const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Ends a server span with what the request turned out to be. */
export function endServerSpan(span: Span, method: string, route: string, status: number, requestId: string | undefined): void {
  span.updateName(`${method} ${route}`);
  span.setAttributes({ 'http.route': route, 'http.response.status_code': status, ...(requestId ? { 'gatehouse.request_id': requestId } : {}) });
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Where a span that starts work queued earlier comes from: the W3C context the work carried (a job's). */
export interface CarriedContext {
  traceparent: string;
  tracestate?: string;
  /** Further `traceparent`s the work also belongs to: the span links to them. */
  links?: string[];
}

/**
 * Runs `fn` inside a span named `name` (a transform run, a destination call, a job) when tracing is on; just
 * runs it otherwise. `headers`, when given, receive the span's `traceparent` (a call leaving the process).
 * With `from` (a job's run; `null` when the job carried no context), the span is a child of the carried context,
 * or the root of a trace of its own, never of whatever happens to be active (the in-process queue starts a job
 * from the call that added another one).
 */
export async function inSpan<T>(
  name: string,
  kind: 'internal' | 'client' | 'consumer',
  attributes: Record<string, string | number>,
  fn: (headers?: Record<string, string>) => Promise<T>,
  from?: CarriedContext | null,
): Promise<T> {
  if (!provider) return fn();
  let parent = context.active();
  const links: Link[] = [];
  if (from !== undefined) {
    parent = from
      ? propagation.extract(ROOT_CONTEXT, { traceparent: from.traceparent, ...(from.tracestate ? { tracestate: from.tracestate } : {}) })
      : ROOT_CONTEXT;
    for (const traceparent of from?.links ?? []) {
      const linked = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
      if (linked) links.push({ context: linked });
    }
  }
  const span = tracer().startSpan(
    name,
    { kind: kind === 'client' ? SpanKind.CLIENT : kind === 'consumer' ? SpanKind.CONSUMER : SpanKind.INTERNAL, attributes, links },
    parent,
  );
  const active = trace.setSpan(parent, span);
  const headers: Record<string, string> = {};
  propagation.inject(active, headers);
  try {
    return await context.with(active, () => fn(headers));
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message.slice(0, 200) : undefined });
    throw error;
  } finally {
    span.end();
  }
}

/** Runs `fn` with `ctx` as the active trace context (a request's server span), or just runs it. */
export function withContext<T>(ctx: Context | undefined, fn: () => T): T {
  return ctx ? context.with(ctx, fn) : fn();
}
