import { captureTraceContext, fromJobTraceMetadata, MAX_JOB_TRACE_LINKS, mergeTraceContexts, toJobTraceMetadata } from './job-trace-context';

const tp = (n: number) => `00-${n.toString(16).padStart(32, '0')}-${'1'.repeat(16)}-01`;

describe('job trace context', () => {
  it('round-trips through the job option', () => {
    const trace = { traceparent: tp(1), tracestate: 'vendor=x', links: [tp(2), tp(3)] };
    expect(fromJobTraceMetadata(toJobTraceMetadata(trace))).toEqual(trace);
  });

  it("reads another service's BullMQ telemetry carrier (bullmq-otel writes the propagator's fields as JSON)", () => {
    expect(fromJobTraceMetadata(JSON.stringify({ traceparent: tp(7), baggage: 'k=v' }))).toEqual({ traceparent: tp(7) });
  });

  it.each([
    ['nothing', undefined],
    ['a number', 42],
    ['not JSON', '{"traceparent":'],
    ['JSON null', 'null'],
    ['an array', `["${tp(1)}"]`],
    ['no traceparent', '{"tracestate":"a=b"}'],
    ['a malformed traceparent', '{"traceparent":"00-abc-def-01"}'],
    ['an upper-case traceparent', JSON.stringify({ traceparent: tp(0xabc).toUpperCase() })],
    ['an oversized value', JSON.stringify({ traceparent: tp(1), tracestate: 'x'.repeat(9000) })],
  ])('is no context at all for %s (the job still runs)', (_what, metadata) => {
    expect(fromJobTraceMetadata(metadata)).toBeUndefined();
  });

  it('drops what is malformed beside a valid traceparent', () => {
    const metadata = JSON.stringify({ traceparent: tp(1), tracestate: 'x'.repeat(600), links: ['nope', 3, tp(2)] });
    expect(fromJobTraceMetadata(metadata)).toEqual({ traceparent: tp(1), links: [tp(2)] });
  });

  it('merges the requests of one batch: the first is the parent, the other distinct ones links, bounded', () => {
    expect(mergeTraceContexts([])).toBeUndefined();
    expect(mergeTraceContexts([undefined, undefined])).toBeUndefined();
    expect(mergeTraceContexts([undefined, { traceparent: tp(1), tracestate: 's' }, { traceparent: tp(1) }])).toEqual({ traceparent: tp(1), tracestate: 's' });
    const many = Array.from({ length: 100 }, (_, i) => ({ traceparent: tp(i + 1) }));
    const merged = mergeTraceContexts([...many, ...many])!;
    expect(merged.traceparent).toBe(tp(1));
    expect(merged.links).toEqual(many.slice(1, MAX_JOB_TRACE_LINKS + 1).map((c) => c.traceparent));
  });

  it('captures nothing while tracing is off (no propagator registered)', () => {
    expect(captureTraceContext()).toBeUndefined();
  });
});
