import { context, propagation } from '@opentelemetry/api';

/**
 * The W3C trace context of the work that added a job (a request), carried with the job to its run so that the job's
 * span joins that trace. On BullMQ it travels in the job's options (`opts.telemetry.metadata`, a JSON carrier, as
 * BullMQ's own telemetry and bullmq-otel write it), never in the job's data: payloads stay what other services write,
 * and their jobs, with no trace context or a malformed one, run as before (in a trace of their own).
 */
export interface JobTraceContext {
  traceparent: string;
  tracestate?: string;
  /** The `traceparent`s of further requests whose work shares the job (one batch of several requests' audit events). */
  links?: string[];
}

/** Links kept on one job beyond its parent (a batch of 500 events may come from 500 requests). */
export const MAX_JOB_TRACE_LINKS = 32;

const TRACEPARENT = /^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/;
const MAX_TRACESTATE_LENGTH = 512;

/**
 * The trace context active here (the request being served), or undefined: always undefined while tracing is off,
 * since no propagator is registered then (the API's default one injects nothing).
 */
export function captureTraceContext(): JobTraceContext | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  if (!carrier.traceparent) return undefined;
  return carrier.tracestate ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate } : { traceparent: carrier.traceparent };
}

/** One job's context from those of the requests whose work it carries: the first is the parent, the others links. */
export function mergeTraceContexts(contexts: Array<JobTraceContext | undefined>): JobTraceContext | undefined {
  let first: JobTraceContext | undefined;
  const links = new Set<string>();
  for (const ctx of contexts) {
    if (!ctx) continue;
    if (!first) first = { traceparent: ctx.traceparent, ...(ctx.tracestate ? { tracestate: ctx.tracestate } : {}) };
    else if (ctx.traceparent !== first.traceparent && links.size < MAX_JOB_TRACE_LINKS) links.add(ctx.traceparent);
  }
  return first && links.size > 0 ? { ...first, links: [...links] } : first;
}

/** The job option's value (BullMQ `telemetry.metadata`). */
export function toJobTraceMetadata(trace: JobTraceContext): string {
  return JSON.stringify(trace);
}

/** Reads a job's carried context, whoever wrote it; anything malformed is no context (the job still runs). */
export function fromJobTraceMetadata(metadata: unknown): JobTraceContext | undefined {
  if (typeof metadata !== 'string' || metadata.length > 8192) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(metadata);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { traceparent, tracestate, links } = parsed as Record<string, unknown>;
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return undefined;
  const out: JobTraceContext = { traceparent };
  if (typeof tracestate === 'string' && tracestate.length <= MAX_TRACESTATE_LENGTH) out.tracestate = tracestate;
  if (Array.isArray(links)) {
    const valid = links.filter((l): l is string => typeof l === 'string' && TRACEPARENT.test(l)).slice(0, MAX_JOB_TRACE_LINKS);
    if (valid.length > 0) out.links = valid;
  }
  return out;
}
